"""Kueue's flavor assigner (gangplan.solver.kueue.flavors) against Kueue's own TestAssignFlavors
table (kubernetes-sigs/kueue pkg/scheduler/flavorassigner/flavorassigner_test.go at v0.19.2),
ported case by case into tests/fixtures/upstream_kueue_flavors/assign_flavors.yaml.

The harness does what the Go test's does: one ClusterQueue (and a second one in the same cohort),
usage added to each, a preemption oracle answering the case's ``simulationResult`` or (Preempt, 0),
``Assign(nil)``, then the representative mode, the assignment (flavors, modes, tried flavor index,
requests, count, status reasons), borrowing, usage and NoFitReason compared whole, and the flavor
attempts compared as ``flexAssertConsidered`` does.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from gangplan.models.kueue import (
    BorrowWithinCohort,
    ClusterQueue,
    Cohort,
    FlavorFungibility,
    FlavorQuotas,
    KueuePodSet,
    KueuePreemption,
    KueueWorkload,
    ResourceFlavor,
    ResourceGroup,
    ResourceQuota,
    TopologyRequest,
)
from gangplan.models.objects import NodeSelectorTerm, Requirement, Taint, Toleration
from gangplan.predicates.quota import QuotaTree
from gangplan.solver.kueue.flavors import (
    Assignment,
    Mode,
    OracleQuery,
    assign_flavors,
)
from gangplan.solver.kueue.partial import assign_with_partial_admission, podset_reducer_search

FIXTURES = Path(__file__).parent / "fixtures" / "upstream_kueue_flavors"
TABLE = yaml.safe_load((FIXTURES / "assign_flavors.yaml").read_text())

# --- building gangplan's models from the fixture ---------------------------------------------


def _flavor(d: dict) -> ResourceFlavor:
    return ResourceFlavor(
        name=d["name"],
        node_labels=d.get("node_labels") or {},
        node_taints=tuple(Taint(**t) for t in d.get("node_taints", ())),
        tolerations=tuple(Toleration(**t) for t in d.get("tolerations", ())),
        topology_name=d.get("topology_name"),
    )


FLAVORS = {d["name"]: _flavor(d) for d in TABLE["resource_flavors"]}


def cluster_queue(d: dict) -> ClusterQueue:
    groups = tuple(
        ResourceGroup(
            covered_resources=tuple(g["covered_resources"]),
            flavors=tuple(
                FlavorQuotas(
                    name=f["name"], resources=tuple(ResourceQuota(**q) for q in f["resources"])
                )
                for f in g["flavors"]
            ),
        )
        for g in d.get("resource_groups", ())
    )
    pre = d.get("preemption") or {}
    bwc = pre.get("borrow_within_cohort")
    return ClusterQueue(
        name=d["name"],
        cohort=d.get("cohort"),
        resource_groups=groups,
        flavor_fungibility=FlavorFungibility(**d.get("flavor_fungibility", {})),
        preemption=KueuePreemption(
            reclaim_within_cohort=pre.get("reclaim_within_cohort", "Never"),
            within_cluster_queue=pre.get("within_cluster_queue", "Never"),
            borrow_within_cohort=BorrowWithinCohort(**bwc) if bwc else None,
        ),
    )


def podset(d: dict) -> KueuePodSet:
    terms = None
    if d.get("node_affinity"):
        terms = tuple(
            NodeSelectorTerm(
                match_expressions=tuple(
                    Requirement(key=e["key"], operator=e["operator"], values=tuple(e["values"]))
                    for e in t["match_expressions"]
                )
            )
            for t in d["node_affinity"]
        )
    tr = d.get("topology_request")
    return KueuePodSet(
        name=d["name"],
        count=d["count"],
        min_count=d.get("min_count"),
        requests=d.get("requests") or {},
        node_selector=d.get("node_selector") or {},
        node_affinity=terms,
        tolerations=tuple(Toleration(**t) for t in d.get("tolerations", ())),
        topology_request=TopologyRequest(
            required=tr.get("required"),
            preferred=tr.get("preferred"),
            podset_group=tr.get("podset_group"),
        )
        if tr
        else None,
    )


def run_case(case: dict, flavors: dict | None = None, version: str = "0.19.2") -> Assignment:
    cq = cluster_queue(case["cluster_queue"])
    cqs = [cq]
    if case.get("secondary_cluster_queue"):
        cqs.append(cluster_queue(case["secondary_cluster_queue"]))
    tree = QuotaTree.from_objects(cqs, [])
    usage = tree.empty_usage()
    for key, cq_name in (
        ("cluster_queue_usage", cqs[0].name),
        ("secondary_cluster_queue_usage", cqs[-1].name),
    ):
        if case.get(key):
            tree.add(usage, cq_name, {(f, r): q for f, r, q in case[key]})
    gates = case.get("feature_gates") or {}
    reclaim = case["workload"].get("reclaimable_pods") or {}
    if gates.get("ReclaimablePods") is False:
        reclaim = {}
    wl = KueueWorkload(
        namespace="default",
        name="wl",
        podsets=tuple(podset(p) for p in case["workload"]["podsets"]),
        reclaimable_pods=reclaim,
    )
    sim = {(f, r): (p, b) for f, r, p, b in case.get("simulation_result", ())}

    def test_oracle(q: OracleQuery):  # testOracle in flavorassigner_test.go
        return sim.get((q.flavor, q.resource), ("Preempt", 0))

    return assign_flavors(
        wl,
        cq,
        tree,
        usage,
        FLAVORS if flavors is None else flavors,
        oracle=test_oracle,
        enable_fair_sharing=bool(case.get("enable_fair_sharing")),
        topology_levels=case.get("topologies"),
        version=version,
    )


# --- comparing ---------------------------------------------------------------------------------


def observed(a: Assignment) -> dict:
    """The assignment in the fixture's shape."""
    return {
        "representative_mode": str(a.representative_mode()),
        "borrowing": a.borrowing,
        "usage": sorted([f, r, q] for (f, r), q in a.usage.items()),
        "no_fit_reason": a.no_fit_reason,
        "podsets": [
            {
                "name": ps.name,
                "count": ps.count,
                "flavors": {
                    r: {"name": f.name, "mode": str(f.mode), "tried_flavor_idx": f.tried_flavor_idx}
                    for r, f in ps.flavors.items()
                },
                "requests": ps.requests,
                "reasons": sorted(ps.reasons),
                **({"error": ps.error} if ps.error is not None else {}),
            }
            for ps in a.podsets
        ],
    }


def attempts_of(a: Assignment) -> dict[str, list[dict]]:
    out = {}
    for ps in a.podsets:
        rows = []
        for at in ps.attempts:
            row = {"flavor": at.flavor, "mode": str(at.mode)}
            if at.borrow:
                row["borrow"] = at.borrow
            if at.preemption_possibility:
                row["preemption_possibility"] = at.preemption_possibility
            if at.reasons:
                row["reasons"] = list(at.reasons)
            if at.no_fit_reason:
                row["no_fit_reason"] = at.no_fit_reason
            rows.append(row)
        out[ps.name] = rows
    return out


def considered_mismatches(want_ps: list[dict], got: dict[str, list[dict]]) -> list[str]:
    """``flexAssertConsidered``: with a Fit attempt, every attempt made must be wanted (a Fit
    where "does not provide resource" was wanted passes); without, every wanted one must be made."""
    problems = []
    for wp in want_ps:
        want = {a["flavor"]: a for a in wp.get("attempts", ())}
        if not want:
            continue
        have = {a["flavor"]: a for a in got.get(wp["name"], [])}
        if any(a["mode"] == "Fit" for a in have.values()):
            for flv, ga in have.items():
                wa = want.get(flv)
                if wa is None:
                    problems.append(f"{wp['name']}: unexpected attempt {ga}")
                elif ga["mode"] == "Fit" and _does_not_provide_only(wa):
                    continue
                elif wa != _normalise(ga, wa):
                    problems.append(f"{wp['name']}: {flv}: want {wa}, got {ga}")
        else:
            for flv, wa in want.items():
                ga = have.get(flv)
                if ga is None:
                    problems.append(f"{wp['name']}: missing attempt {flv}")
                elif wa != _normalise(ga, wa):
                    problems.append(f"{wp['name']}: {flv}: want {wa}, got {ga}")
    return problems


def _normalise(got: dict, want: dict) -> dict:
    out = dict(got)
    if "reasons" in out:
        out["reasons"] = sorted(out["reasons"])
    if "reasons" in want:
        want["reasons"] = sorted(want["reasons"])
    return out


def _does_not_provide_only(a: dict) -> bool:
    return (
        a["mode"] == "NoFit"
        and bool(a.get("reasons"))
        and all("does not provide resource" in r for r in a["reasons"])
    )


def differences(case: dict, flavors: dict | None = None) -> list[str]:
    got = run_case(case, flavors)
    obs = observed(got)
    want = case["want"]
    out = []
    for key in ("representative_mode", "borrowing", "usage", "no_fit_reason", "podsets"):
        w, g = want[key], obs[key]
        if key == "podsets":
            w = [{k: v for k, v in p.items() if k != "attempts"} for p in w]
        if w != g:
            out.append(f"{key}: want {w!r}\n  got  {g!r}")
    out += considered_mismatches(want["podsets"], attempts_of(got))
    return out


# --- the table ---------------------------------------------------------------------------------

NOT_PORTED = {
    # ElasticJobsViaWorkloadSlices (replacing an admitted slice) is not modelled.
    "workload slice preemption fits in the original workload resource flavor",
    "workload slice preemption does not fit in the original workload resource flavor",
}


def _not_ported(case: dict) -> bool:
    return case["name"] in NOT_PORTED or bool(case.get("preempt_workload_slice"))


def _cases():
    for case in TABLE["cases"]:
        if not _not_ported(case):
            yield pytest.param(case, id=f"L{case['line']}:{case['name']}")


def test_the_cases_left_out_are_the_workload_slice_ones():
    """The table's cases not run above are exactly those of a feature not modelled (elastic
    workload slices), so the list cannot go stale."""
    out = [c["name"] for c in TABLE["cases"] if _not_ported(c)]
    assert sorted(out) == sorted(NOT_PORTED), out


@pytest.mark.parametrize("case", list(_cases()))
def test_upstream_assign_flavors(case: dict) -> None:
    problems = differences(case)
    if case.get("known_difference"):
        assert problems, f"known difference no longer differs: {case['known_difference']}"
        return
    assert not problems, "\n".join(problems)


def test_table_is_ported_whole() -> None:
    """Every upstream case is in the fixture, under its name and with its source."""
    assert TABLE["source"]["tag"] == "v0.19.2"
    assert TABLE["source"]["file"].endswith("flavorassigner_test.go")
    names = [c["name"] for c in TABLE["cases"]]
    assert len(names) == len(set(names)) == 60
    ported = [n for n in names if n not in NOT_PORTED]
    assert len(ported) >= 30


# --- behaviour beyond the table ------------------------------------------------------------


def _simple_cq(**kw) -> ClusterQueue:
    flavors = kw.pop("flavors", (("one", 4000), ("two", 4000)))
    return ClusterQueue(
        name="cq",
        resource_groups=(
            ResourceGroup(
                covered_resources=("cpu",),
                flavors=tuple(
                    FlavorQuotas(name=f, resources=(ResourceQuota(name="cpu", nominal=q),))
                    for f, q in flavors
                ),
            ),
        ),
        **kw,
    )


def _wl(*podsets: KueuePodSet) -> KueueWorkload:
    return KueueWorkload(namespace="ns", name="w", podsets=podsets)


def test_default_oracle_reports_no_candidates_as_preempt_ranked_below_fit() -> None:
    """Without an oracle nothing can be preempted: a full first flavor is Preempt with
    NoCandidates, and the assigner moves on to the second flavor that fits."""
    cq = _simple_cq()
    tree = QuotaTree.from_objects([cq], [])
    usage = tree.add(tree.empty_usage(), "cq", {("one", "cpu"): 3000})
    a = assign_flavors(
        _wl(KueuePodSet(name="main", count=1, requests={"cpu": 2000})), cq, tree, usage, FLAVORS
    )
    assert a.representative_mode() == Mode.Fit
    assert a.flavors_by_podset() == {"main": {"cpu": "two"}}
    one = next(at for at in a.podsets[0].attempts if at.flavor == "one")
    assert (one.mode, one.preemption_possibility) == (Mode.Preempt, "NoCandidates")


def test_no_candidates_ranking_changed_in_v0_19_1() -> None:
    """kueue #13896: before v0.19.1 a NoCandidates flavor with no borrowing beat a fitting one
    that borrows (under PreemptionOverBorrowing); from v0.19.1 it ranks below."""
    cq = _simple_cq(
        cohort="co",
        flavor_fungibility=FlavorFungibility(
            when_can_borrow="TryNextFlavor",
            when_can_preempt="TryNextFlavor",
            preference="PreemptionOverBorrowing",
        ),
        preemption=KueuePreemption(within_cluster_queue="LowerPriority"),
        flavors=(("one", 4000), ("two", 0)),
    )

    def other(name: str, flavor: str, nominal: int) -> ClusterQueue:
        quota = FlavorQuotas(name=flavor, resources=(ResourceQuota(name="cpu", nominal=nominal),))
        group = ResourceGroup(covered_resources=("cpu",), flavors=(quota,))
        return ClusterQueue(name=name, cohort="co", resource_groups=(group,))

    tree = QuotaTree.from_objects([cq, other("lender", "two", 8000), other("b", "one", 0)], [])
    usage = tree.add(tree.empty_usage(), "b", {("one", "cpu"): 3500})  # borrowed from cq
    wl = _wl(KueuePodSet(name="main", count=1, requests={"cpu": 1000}))
    new = assign_flavors(wl, cq, tree, usage, FLAVORS, version="0.19.2")
    old = assign_flavors(wl, cq, tree, usage, FLAVORS, version="0.19.0")
    assert new.flavors_by_podset() == {"main": {"cpu": "two"}}
    assert new.representative_mode() == Mode.Fit and new.borrowing == 1
    assert old.flavors_by_podset() == {"main": {"cpu": "one"}}
    assert old.representative_mode() == Mode.Preempt and old.borrowing == 0


def test_tas_hook_turns_fit_into_preempt_then_nofit() -> None:
    """A TAS flavor: the placement hook failing with the current usage makes the PodSet Preempt
    with the hook's reason; failing on an empty cluster too makes it NoFit."""
    cq = _simple_cq(flavors=(("tas-a", 4000),))
    tree = QuotaTree.from_objects([cq], [])
    ps = KueuePodSet(
        name="main",
        count=1,
        requests={"cpu": 1000},
        topology_request=TopologyRequest(required="kubernetes.io/hostname"),
    )
    calls = []

    def fails_when_busy(reqs, flavor, empty):
        calls.append((flavor, empty, [r.count for r in reqs]))
        return None if empty else ("main", "no domain fits")

    a = assign_flavors(_wl(ps), cq, tree, tree.empty_usage(), FLAVORS, tas_check=fails_when_busy)
    assert a.representative_mode() == Mode.Preempt
    assert a.podsets[0].reasons == ["no domain fits"]
    assert calls == [("tas-a", False, [1]), ("tas-a", True, [1])]
    b = assign_flavors(
        _wl(ps), cq, tree, tree.empty_usage(), FLAVORS, tas_check=lambda r, f, e: ("main", "never")
    )
    assert b.representative_mode() == Mode.NoFit


def test_tas_flavor_refuses_a_podset_without_topology() -> None:
    cq = _simple_cq(flavors=(("tas-a", 4000), ("default", 4000)))
    tree = QuotaTree.from_objects([cq], [])
    a = assign_flavors(
        _wl(KueuePodSet(name="main", count=1, requests={"cpu": 1000})),
        cq,
        tree,
        tree.empty_usage(),
        FLAVORS,
    )
    assert a.flavors_by_podset() == {"main": {"cpu": "default"}}
    assert a.podsets[0].attempts[1].reasons == (
        'Flavor "tas-a" supports only TopologyAwareScheduling',
    )


def test_partial_admission_finds_the_largest_count() -> None:
    cq = _simple_cq(flavors=(("one", 5000),))
    tree = QuotaTree.from_objects([cq], [])
    wl = _wl(KueuePodSet(name="main", count=10, min_count=2, requests={"cpu": 1000}))
    a = assign_with_partial_admission(wl, cq, tree, tree.empty_usage(), FLAVORS)
    assert a.representative_mode() == Mode.Fit
    assert a.podsets[0].count == 5
    assert a.usage == {("one", "cpu"): 5000}


def test_podset_reducer_search_matches_upstream_steps() -> None:
    """PodSetReducer: every PodSet loses the same fraction of its reducible pods."""
    podsets = [
        KueuePodSet(name="a", count=4, min_count=2),
        KueuePodSet(name="b", count=6, min_count=0),
    ]
    assert podset_reducer_search(podsets, lambda c: sum(c) <= 6) == [3, 3]
    assert podset_reducer_search(podsets, lambda c: False) is None
    assert podset_reducer_search([KueuePodSet(name="a", count=3)], lambda c: True) is None


# --- TestReclaimBeforePriorityPreemption and TestHierarchical -----------------------------------

SMALL = yaml.safe_load((FIXTURES / "reclaim_and_hierarchical.yaml").read_text())


def _quota_groups(quotas: dict) -> tuple[ResourceGroup, ...]:
    """{flavor: {resource: nominal or [nominal, borrowingLimit]}} as one resource group."""
    flavors = []
    covered: list[str] = []
    for fname, res in quotas.items():
        qs = []
        for r, v in res.items():
            nominal, borrowing = (v[0], v[1]) if isinstance(v, list) else (v, None)
            qs.append(ResourceQuota(name=r, nominal=nominal, borrowing_limit=borrowing))
            if r not in covered:
                covered.append(r)
        flavors.append(FlavorQuotas(name=fname, resources=tuple(qs)))
    return (ResourceGroup(covered_resources=tuple(covered), flavors=tuple(flavors)),)


def _fungibility(d: dict) -> FlavorFungibility:
    # Go's zero value "" acts as MayStopSearch: shouldTryNextFlavor only asks "== TryNextFlavor".
    return FlavorFungibility(
        when_can_borrow=d.get("when_can_borrow") or "MayStopSearch",
        when_can_preempt=d.get("when_can_preempt") or "MayStopSearch",
        preference=d.get("preference"),
    )


def _small_cases():
    for table in SMALL["tests"]:
        for case in table["cases"]:
            yield pytest.param(table, case, id=f"{table['test']}:L{case['line']}:{case['name']}")


@pytest.mark.parametrize(("table", "case"), list(_small_cases()))
def test_upstream_reclaim_and_hierarchical(table: dict, case: dict) -> None:
    setup = table["setup"]
    tcq, ocq = setup["test_cluster_queue"], setup["other_cluster_queue"]
    pre = tcq["preemption"]
    cq = ClusterQueue(
        name=tcq["name"],
        cohort=tcq["cohort"],
        resource_groups=_quota_groups(case.get("quotas") or tcq["quotas"]),
        flavor_fungibility=_fungibility(
            case.get("flavor_fungibility") or tcq["flavor_fungibility"]
        ),
        preemption=KueuePreemption(
            within_cluster_queue=pre["within_cluster_queue"],
            reclaim_within_cohort=pre["reclaim_within_cohort"],
        ),
    )
    other = ClusterQueue(
        name=ocq["name"], cohort=ocq["cohort"], resource_groups=_quota_groups(ocq["quotas"])
    )
    cohorts = [
        Cohort(name=c["name"], parent=c.get("parent"), resource_groups=_quota_groups(c["quotas"]))
        for c in setup["cohorts"]
    ]
    tree = QuotaTree.from_objects([cq, other], cohorts)
    usage = tree.empty_usage()
    tree.add(usage, other.name, {(f, r): q for f, r, q in case["other_usage"]})
    tree.add(usage, cq.name, {(f, r): q for f, r, q in case["test_usage"]})
    sim = {(f, r): (p, b) for f, r, p, b in case.get("simulation_result", ())}
    flavors = {n: ResourceFlavor(name=n) for n in setup["flavors"]}
    wl = _wl(KueuePodSet(name="main", count=1, requests=case["requests"]))
    a = assign_flavors(
        wl,
        cq,
        tree,
        usage,
        flavors,
        oracle=lambda q: sim.get((q.flavor, q.resource), ("Preempt", 0)),
    )
    assert str(a.representative_mode()) == case["want_mode"]
    assert a.flavors_by_podset()["main"] == case["want_flavors"]


# --- TestDeletedFlavors and TestIsPreferred -----------------------------------------------------

DELETED = yaml.safe_load((FIXTURES / "deleted_flavors.yaml").read_text())


@pytest.mark.parametrize(
    "case", DELETED["cases"], ids=[f"L{c['line']}:{c['name']}" for c in DELETED["cases"]]
)
def test_upstream_deleted_flavors(case: dict) -> None:
    """The ClusterQueue still lists "deleted-flavor"; the ResourceFlavors offered do not."""
    problems = differences(case, {d["name"]: _flavor(d) for d in DELETED["resource_flavors"]})
    assert not problems, "\n".join(problems)


PREFERRED = yaml.safe_load((FIXTURES / "is_preferred.yaml").read_text())
_GRANULAR = {"noFit": 0, "noPreemptionCandidates": 1, "preempt": 2, "reclaim": 3, "fit": 4}


@pytest.mark.parametrize(
    "case", PREFERRED["cases"], ids=[f"L{c['line']}:{c['name']}" for c in PREFERRED["cases"]]
)
def test_upstream_is_preferred(case: dict) -> None:
    from gangplan.solver.kueue.flavors import _is_preferred, _Version

    cq = ClusterQueue(
        name="cq", flavor_fungibility=FlavorFungibility(preference=case["preference"])
    )
    a = (_GRANULAR[case["a"][0]], case["a"][1])
    b = (_GRANULAR[case["b"][0]], case["b"][1])
    assert _is_preferred(a, b, cq, _Version.parse("0.19.2")) is case["want"]


def test_next_cycle_starts_after_the_last_tried_flavor() -> None:
    """LastTriedFlavorIdx: the first flavor fits and stops the search (tried index 0); the next
    cycle starts at the second flavor; after the last flavor it starts over (-1)."""
    cq = _simple_cq()
    tree = QuotaTree.from_objects([cq], [])
    wl = _wl(KueuePodSet(name="main", count=1, requests={"cpu": 1000}))
    first = assign_flavors(wl, cq, tree, tree.empty_usage(), FLAVORS)
    assert first.flavors_by_podset() == {"main": {"cpu": "one"}}
    assert first.next_start_flavors() == {(0, "cpu"): 1}
    second = assign_flavors(
        wl, cq, tree, tree.empty_usage(), FLAVORS, start_flavor=first.next_start_flavors()
    )
    assert second.flavors_by_podset() == {"main": {"cpu": "two"}}
    assert second.next_start_flavors() == {(0, "cpu"): 0}


# --- TestIsNoFitDueToCapacityAndLimits ----------------------------------------------------------

NO_FIT = yaml.safe_load((FIXTURES / "no_fit_reason.yaml").read_text())
NO_FIT_NOT_PORTED = {
    "flavor mismatch for workload slices": "workload slices are not modelled",
    "flavor not allowed by annotations": "ConcurrentAdmission's allowed-flavors annotation is not "
    "modelled",
}


def no_nodes_tas_check(requests, flavor, simulate_empty):
    """The Go test's cache holds Topologies but no Node: every TAS placement fails."""
    return requests[0].podset.name, "no topology domain has the pods' resources"


def test_the_no_fit_cases_left_out_are_named():
    names = {c["name"] for c in NO_FIT["cases"]}
    assert set(NO_FIT_NOT_PORTED) <= names


@pytest.mark.parametrize(
    "case",
    [
        pytest.param(c, id=f"L{c['line']}:{c['name']}")
        for c in NO_FIT["cases"]
        if c["name"] not in NO_FIT_NOT_PORTED
    ],
)
def test_upstream_no_fit_reason(case: dict) -> None:
    cq = cluster_queue(case["cluster_queue"])
    siblings = [cluster_queue(c) for c in case.get("sibling_cluster_queues", ())]
    tree = QuotaTree.from_objects([cq, *siblings], [])
    usage = tree.empty_usage()
    if case.get("cluster_queue_usage"):
        tree.add(usage, cq.name, {(f, r): q for f, r, q in case["cluster_queue_usage"]})
    for name, rows in (case.get("sibling_usage") or {}).items():
        tree.add(usage, name, {(f, r): q for f, r, q in rows})
    sim = {(f, r): (p, b) for f, r, p, b in case.get("simulation_result", ())}
    a = assign_flavors(
        _wl(podset(case["podset"])),
        cq,
        tree,
        usage,
        {d["name"]: _flavor(d) for d in case["resource_flavors"]},
        oracle=lambda q: sim.get((q.flavor, q.resource), ("Preempt", 0)),
        tas_check=no_nodes_tas_check,
        topology_levels=case.get("topologies") or {},
    )
    assert a.no_fit_reason == case["want_no_fit_reason"]
    for ps in a.podsets:
        for at in ps.attempts:
            if at.flavor in case["want_flavor_attempts"]:
                assert at.no_fit_reason == case["want_flavor_attempts"][at.flavor], at


# --- TestSearch (PodSetReducer) -----------------------------------------------------------------

REDUCER = yaml.safe_load((FIXTURES / "podset_reducer.yaml").read_text())


@pytest.mark.parametrize(
    "case", REDUCER["cases"], ids=[f"L{c['line']}:{c['name']}" for c in REDUCER["cases"]]
)
def test_upstream_podset_reducer(case: dict) -> None:
    podsets = [
        KueuePodSet(name=f"ps{i + 1}", count=count, min_count=min_count)
        for i, (count, min_count) in enumerate(case["podsets"])
    ]
    counts = podset_reducer_search(podsets, lambda c: sum(c) <= case["count_limit"])
    assert (counts is not None) == case["want_found"]
    assert (sum(counts) if counts is not None else 0) == case["want_count"]
