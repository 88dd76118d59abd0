"""The vectorised Filter reason counts (``Plugin.filter_reasons``, ``fit_failures``) agree with
``filter_one`` node by node: same reasons, same UnschedulableAndUnresolvable code. FitError texts
and rejection tables are built from them, so this is what keeps those texts exact."""

from __future__ import annotations

import numpy as np
import pytest

from gangplan.bench.generators.builders import to_cluster
from gangplan.bench.generators.small_snapshots import small_mixed, small_preemption
from gangplan.solver.greedy.framework import Code, CycleState
from gangplan.solver.greedy.plugins.noderesources.fit import Fit, fit_failures
from gangplan.solver.greedy.profile import build_profile
from gangplan.solver.greedy.snapshot import NodeTable


def _per_node(masks, unresolvable, k):
    return sorted(r for r, m in masks if m[k]), bool(unresolvable[k])


@pytest.mark.parametrize("seed", range(30))
def test_filter_reasons_match_filter_one(seed):
    cluster = to_cluster(small_mixed(seed) if seed < 20 else small_preemption(seed))
    snap = NodeTable(cluster)
    profile = build_profile(cluster)
    # Put some pending pods on nodes too, so anti-affinity and spread counts are non-trivial.
    for k, p in enumerate(cluster.pending_pods[::2]):
        snap.assume(p, k % snap.n)
    checked = 0
    for pod in cluster.pending_pods:
        cs = CycleState()
        if any(
            not pl.pre_filter(cs, pod, snap).ok and pl.pre_filter(cs, pod, snap).code != Code.SKIP
            for pl in profile.filters
        ):
            continue
        cs = CycleState()
        for pl in profile.filters:
            if pl.pre_filter(cs, pod, snap).code == Code.SKIP:
                cs.skip_filter.add(pl.name)
        for pl in profile.filters:
            if pl.name in cs.skip_filter:
                continue
            rejected = snap.all_nodes[~pl.filter_mask(cs, pod, snap, snap.all_nodes)]
            if len(rejected) == 0:
                continue
            masks, unres = pl.filter_reasons(cs, pod, snap, rejected)
            for k, i in enumerate(rejected.tolist()):
                st = pl.filter_one(cs, pod, snap, i)
                assert _per_node(masks, unres, k) == (
                    sorted(st.reasons),
                    st.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                ), (pl.name, pod.key, i)
                checked += 1
    assert checked > 0


@pytest.mark.parametrize("seed", range(10))
def test_fit_failures_with_added_copies_match_assuming_them(seed):
    cluster = to_cluster(small_mixed(seed))
    snap = NodeTable(cluster)
    fit = next(pl for pl in build_profile(cluster).filters if isinstance(pl, Fit))
    for pod in cluster.pending_pods[:3]:
        req = snap.request_vector(pod)
        for t in range(3):
            masks, unres = fit_failures(snap, req, snap.all_nodes, np.full(snap.n, t))
            for i in range(snap.n):
                for _ in range(t):
                    snap.assume(pod.model_copy(update={"name": f"{pod.name}-copy-{_}"}), i)
                st = fit.filter_one(CycleState(), pod, snap, i)
                for _ in range(t):
                    snap.forget(snap.pods_on[i][-1])
                assert _per_node(masks, unres, i) == (
                    sorted(st.reasons),
                    st.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                )
