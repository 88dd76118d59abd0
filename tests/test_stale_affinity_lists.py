"""Issue 39, rule S: inside a v1.36 pod-group cycle the snapshot-wide "nodes with pods with
(anti-)affinity" lists are those of the cycle's start (kubernetes#139028, fixed on master by
kubernetes#139054; ``models.version.stale_affinity_lists``).

The snapshots are hand-made; their upstream outcome is derived from the v1.36.2 code
(``pkg/scheduler/backend/cache/snapshot.go`` ``AssumePod``, ``interpodaffinity/filtering.go``
PreFilter ``getExistingAntiAffinityCounts(HavePodsWithRequiredAntiAffinityList)``,
``scoring.go`` PreScore), and each is solved three ways: v1.36 as upstream runs it, v1.36 with
the lists kept in sync (the rule switched off, to show that the rule alone makes the
difference), and v1.37. Every Result goes through the validator, which names the anti-affinity
that v1.36 breaks.

v1.36 tries a gang's pods quorum-completing pod first (``quorum_pod_first``): of two pods ``y``
and ``z`` created in the same second (arrival by name) with minCount 2, ``z`` completes the
quorum and goes first; v1.37 tries them in arrival order, ``y`` first. Below, ``z`` carries the
(anti-)affinity term against role=b and ``y`` is the role=b pod.
"""

from __future__ import annotations

import pytest

from gangplan.api import load
from gangplan.models import version as versions
from gangplan.solver.greedy import solve_greedy
from gangplan.solver.validate import validate


def _node(name: str, cpu: str) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
        "status": {"allocatable": {"cpu": cpu, "memory": "64Gi", "pods": "110"}},
    }


def _pod(name: str, role: str, cpu: str, affinity: dict | None = None) -> dict:
    spec: dict = {
        "schedulingGroup": {"podGroupName": "g"},
        "containers": [{"name": "c", "resources": {"requests": {"cpu": cpu, "memory": "1Gi"}}}],
    }
    if affinity:
        spec["affinity"] = affinity
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "ml", "labels": {"role": role}},
        "spec": spec,
    }


GROUP = {
    "apiVersion": "scheduling.k8s.io/v1beta1",
    "kind": "PodGroup",
    "metadata": {"name": "g", "namespace": "ml"},
    "spec": {"schedulingPolicy": {"gang": {"minCount": 2}}},
}
AWAY_FROM_B = {
    "podAntiAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": [
            {
                "labelSelector": {"matchLabels": {"role": "b"}},
                "topologyKey": "kubernetes.io/hostname",
            }
        ]
    }
}
NEAR_B = {
    "podAffinity": {
        "preferredDuringSchedulingIgnoredDuringExecution": [
            {
                "weight": 100,
                "podAffinityTerm": {
                    "labelSelector": {"matchLabels": {"role": "b"}},
                    "topologyKey": "kubernetes.io/hostname",
                },
            }
        ]
    }
}


def _solve(objects: list[dict], version: str, monkeypatch=None, stale: bool | None = None):
    cluster = load(objects, kube_version=version)
    if stale is not None:
        monkeypatch.setattr("gangplan.solver.greedy.podgroup.stale_affinity_lists", lambda v: stale)
    res = solve_greedy(cluster, preemption=False)
    return cluster, res


def test_the_rule_is_v136_only():
    assert [v.value for v in versions.VERSIONS if versions.stale_affinity_lists(v)] == ["1.36"]


def test_v136_binds_a_gang_mate_next_to_a_pod_whose_anti_affinity_it_breaks(monkeypatch):
    """One node with room for both. ``z`` (required anti-affinity to role=b) is placed first; when
    the cycle began no node had a pod with required anti-affinity, so ``y``'s Filter does not see
    ``z``'s term: v1.36 places the gang on one node and the validator names the broken term.
    With the lists in sync (the fix) ``y`` is refused and the gang fails; v1.37 tries ``y``
    first, and ``z``'s own term refuses ``z``."""
    objects = [_node("n1", "8"), GROUP, _pod("y", "b", "2"), _pod("z", "a", "2", AWAY_FROM_B)]
    cluster, res = _solve(objects, "1.36")
    assert res.trace.order == ["ml/z", "ml/y"]
    assert res.placements() == {"ml/z": "n1", "ml/y": "n1"}
    problems = validate(cluster, res)
    assert problems and all("anti-affinity" in str(p) for p in problems), problems

    cluster, synced = _solve(objects, "1.36", monkeypatch, stale=False)
    assert synced.placements() == {} and validate(cluster, synced) == []
    assert "ml/y" in synced.trace.pods and "existing pods anti-affinity" in (
        synced.trace.pods["ml/y"].fit_error or ""
    )

    monkeypatch.undo()
    cluster, newer = _solve(objects, "1.37")
    assert (
        newer.trace.order[0] == "ml/y"
        and newer.placements() == {}
        and validate(cluster, newer) == []
    )


def test_v136_scores_a_pod_without_preferred_terms_blind_to_a_gang_mates_preference(monkeypatch):
    """Two nodes; ``z`` prefers nodes with role=b pods (weight 100) and is placed first on n1 (a
    tie, first node). ``y`` has no preferred terms, so its PreScore walks the cycle's
    HavePodsWithAffinityList, empty at the start: ``z``'s preference is not credited and ``y``
    goes where the resource scores send it (n2, the emptier node). With the lists in sync
    ``z``'s preference wins and ``y`` joins it on n1."""
    objects = [
        _node("n1", "8"),
        _node("n2", "8"),
        GROUP,
        _pod("y", "b", "2"),
        _pod("z", "a", "2", NEAR_B),
    ]
    cluster, res = _solve(objects, "1.36")
    assert res.trace.order == ["ml/z", "ml/y"]
    assert res.placements() == {"ml/z": "n1", "ml/y": "n2"}
    assert validate(cluster, res) == []

    cluster, synced = _solve(objects, "1.36", monkeypatch, stale=False)
    assert synced.placements() == {"ml/z": "n1", "ml/y": "n1"}
    assert validate(cluster, synced) == []


@pytest.mark.parametrize("version", ["1.36", "1.37"])
def test_pods_bound_before_the_cycle_stay_visible(version):
    """The lists are stale only for pods assumed in the cycle: a bound pod with required
    anti-affinity to role=b on n1 keeps the gang's role=b pod off n1 at every version."""
    bound = _pod("old", "x", "1", AWAY_FROM_B)
    bound["spec"].pop("schedulingGroup")
    bound["spec"]["nodeName"] = "n1"
    objects = [
        _node("n1", "8"),
        _node("n2", "2"),
        GROUP,
        bound,
        _pod("y", "b", "2"),
        _pod("z", "a", "2"),
    ]
    cluster, res = _solve(objects, version)
    assert res.placements().get("ml/y") == "n2"
    assert validate(cluster, res) == []
