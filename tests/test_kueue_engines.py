"""Kueue's admission in both engines (issue 42): the admission cycle's rules on small snapshots
whose outcome follows from Kueue's code (``pkg/scheduler/scheduler.go``, ``pkg/cache/queue``,
v0.19.2), the scenarios, and the exact engine against a brute force over every placement.

Every Result here goes through the independent validator."""

from __future__ import annotations

import itertools
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import gangplan as gp
from gangplan.solver.validate import validate

ROOT = Path(__file__).resolve().parent.parent
SCENARIOS = ROOT / "scenarios" / "showcase"
GPU = "nvidia.com/gpu"


def node(name: str, gpus: int, **labels: str) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **labels}},
        "status": {"allocatable": {"cpu": "64", "memory": "512Gi", "pods": "110", GPU: str(gpus)}},
    }


def flavor(name: str, **labels: str) -> dict:
    return {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "ResourceFlavor",
        "metadata": {"name": name},
        "spec": {"nodeLabels": labels},
    }


def cluster_queue(
    name: str,
    quotas: list[tuple[str, int]],
    *,
    cohort: str | None = None,
    strategy: str = "BestEffortFIFO",
    borrowing: int | None = None,
    selector: dict | None = None,
) -> dict:
    spec: dict = {
        "namespaceSelector": {} if selector is None else selector,
        "queueingStrategy": strategy,
        "resourceGroups": [
            {
                "coveredResources": ["cpu", "memory", GPU],
                "flavors": [
                    {
                        "name": f,
                        "resources": [
                            {"name": "cpu", "nominalQuota": "1000"},
                            {"name": "memory", "nominalQuota": "100Ti"},
                            {
                                "name": GPU,
                                "nominalQuota": str(q),
                                **(
                                    {"borrowingLimit": str(borrowing)}
                                    if borrowing is not None
                                    else {}
                                ),
                            },
                        ],
                    }
                    for f, q in quotas
                ],
            }
        ],
    }
    if cohort:
        spec["cohortName"] = cohort
    return {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "ClusterQueue",
        "metadata": {"name": name},
        "spec": spec,
    }


def local_queue(ns: str, name: str, cq: str) -> dict:
    return {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "LocalQueue",
        "metadata": {"name": name, "namespace": ns},
        "spec": {"clusterQueue": cq},
    }


def namespace(name: str, **labels: str) -> dict:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": labels}}


def job(
    ns: str, name: str, queue: str, pods: int, gpus: int, minute: int, priority: str | None = None
) -> dict:
    spec: dict = {
        "restartPolicy": "Never",
        "containers": [
            {
                "name": "c",
                "image": "x",
                "resources": {
                    "requests": {"cpu": "1", "memory": "1Gi"},
                    "limits": {GPU: str(gpus)},
                },
            }
        ],
    }
    if priority:
        spec["priorityClassName"] = priority
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {
            "name": name,
            "namespace": ns,
            "creationTimestamp": f"2026-12-01T10:{minute:02d}:00Z",
            "labels": {"kueue.x-k8s.io/queue-name": queue},
        },
        "spec": {
            "parallelism": pods,
            "completions": pods,
            "suspend": True,
            "template": {"spec": spec},
        },
    }


def outcomes(result) -> dict[str, tuple[bool, str | None]]:
    """Job name -> (admitted, reason) from a Result's Kueue part."""
    out = {}
    for key, w in result.kueue.workloads.items():
        name = key.split("/", 1)[1]
        job_name = name.removeprefix("job-").rsplit("-", 1)[0]
        out[job_name] = (w.admitted, w.reason)
    return out


def solve_both(objects: list[dict]):
    c = gp.load(objects)
    g = gp.solve(c, "greedy")
    x = gp.solve(c, "exact", hint=g)
    assert validate(c, g) == [], validate(c, g)
    assert validate(c, x) == [], validate(c, x)
    return c, g, x


BASE = [namespace("ml"), node("n1", 8, pool="a"), node("n2", 8, pool="a"), flavor("a", pool="a")]


def test_best_effort_fifo_skips_a_head_that_does_not_fit():
    objs = BASE + [
        cluster_queue("cq", [("a", 8)]),
        local_queue("ml", "q", "cq"),
        job("ml", "big", "q", 2, 8, 0),
        job("ml", "small", "q", 1, 4, 1),
    ]
    _, g, x = solve_both(objs)
    got = outcomes(g)
    assert got["big"][0] is False and "insufficient quota" in got["big"][1]
    assert got["small"][0] is True
    assert outcomes(x)["small"][0] is True


def test_strict_fifo_head_blocks_the_queue():
    objs = BASE + [
        cluster_queue("cq", [("a", 8)], strategy="StrictFIFO"),
        local_queue("ml", "q", "cq"),
        job("ml", "big", "q", 2, 8, 0),
        job("ml", "small", "q", 1, 4, 1),
    ]
    _, g, x = solve_both(objs)
    got = outcomes(g)
    assert got["big"][0] is False
    assert got["small"] == (False, got["small"][1]) and "StrictFIFO" in got["small"][1]
    # the optimum is not bound by the queue's order: quota alone allows the small job
    assert outcomes(x)["small"][0] is True


def test_priority_orders_the_queue():
    prio = {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {"name": "high"},
        "value": 1000,
    }
    objs = BASE + [
        prio,
        cluster_queue("cq", [("a", 8)]),
        local_queue("ml", "q", "cq"),
        job("ml", "old", "q", 1, 8, 0),
        job("ml", "urgent", "q", 1, 8, 5, priority="high"),
    ]
    _, g, _ = solve_both(objs)
    got = outcomes(g)
    assert got["urgent"][0] is True and got["old"][0] is False


def test_cohort_borrowing_and_its_limit():
    common = BASE + [
        node("n3", 8, pool="a"),
        local_queue("ml", "q", "team"),
    ]
    lender = cluster_queue("other", [("a", 16)], cohort="all")
    _, g, _ = solve_both(
        common
        + [cluster_queue("team", [("a", 8)], cohort="all"), lender, job("ml", "j", "q", 2, 8, 0)]
    )
    w = next(iter(g.kueue.workloads.values()))
    assert w.admitted and w.borrows
    _, g, _ = solve_both(
        common
        + [
            cluster_queue("team", [("a", 8)], cohort="all", borrowing=4),
            lender,
            job("ml", "j", "q", 2, 8, 0),
        ]
    )
    w = next(iter(g.kueue.workloads.values()))
    assert not w.admitted
    gpu = next(q for q in w.quota if q.resource == GPU)
    assert (gpu.requested, gpu.nominal, gpu.most, gpu.borrowing) == (16, 8, 12, 8)


def test_queue_checks_before_nomination():
    objs = BASE + [
        namespace("other"),
        cluster_queue("cq", [("a", 16)], selector={"matchLabels": {"team": "ml"}}),
        local_queue("ml", "q", "cq"),
        job("ml", "wrong-ns", "q", 1, 4, 0),
        job("other", "no-queue", "missing", 1, 4, 0),
    ]
    _, g, x = solve_both(objs)
    got = outcomes(g)
    assert got["wrong-ns"] == (False, "workload namespace doesn't match ClusterQueue selector")
    assert got["no-queue"] == (False, "LocalQueue missing doesn't exist")
    assert not any(a for a, _ in outcomes(x).values())  # nor does the optimum admit them


def test_two_heads_of_a_cohort_in_one_cycle():
    """Both heads are nominated against the cycle's snapshot; the second processed no longer
    fits, stays the head, and the next cycle says why in the assigner's words."""
    objs = BASE + [
        namespace("b"),
        cluster_queue("qa", [("a", 0)], cohort="c"),
        cluster_queue("qb", [("a", 8)], cohort="c"),
        local_queue("ml", "q", "qa"),
        local_queue("b", "q", "qb"),
        job("ml", "borrower", "q", 1, 8, 0),
        job("b", "owner", "q", 1, 8, 1),
    ]
    _, g, _ = solve_both(objs)
    got = outcomes(g)
    # the non-borrowing head goes first (classical iterator), the borrower then finds nothing
    assert got["owner"][0] is True
    assert got["borrower"][0] is False and "insufficient unused quota" in got["borrower"][1]
    assert g.kueue.cycles == 2


def test_scenarios_meet_their_expectations():
    from gangplan.solver.suite import run_scenario

    paths = sorted(SCENARIOS.glob("kueue-*.yaml"))
    assert len(paths) >= 2
    total = 0
    for path in paths:
        row = run_scenario(path)
        assert row.error is None and not row.failures, (path.name, row.error, row.failures)
        total += row.expectations
        d = row.diff
        assert d.kueue is not None
        if d.classification != "identical":  # borrowing-limit: quota alone, for both engines
            assert d.classification == "greedy-suboptimal" and d.kueue.decisive is not None
        c = gp.load(path)
        assert validate(c, d.greedy) == [] and validate(c, d.optimal) == []
    assert total >= 11


# ---- the exact engine against a brute force -------------------------------------------------


def _brute(
    nodes: list[tuple[str, int, str]], jobs: list[tuple[str, int, int]], quota: dict[str, int]
):
    """Max (jobs with every pod placed, pods placed) over every placement: each pod on a node or
    nowhere, a job's pods on nodes of one flavor (its pool), capacity per node, per flavor the
    GPUs of the jobs using it within the ClusterQueue's nominal quota (one ClusterQueue, no
    cohort: Kueue reserves a job's whole request when it admits it, and a job runs only whole)."""
    best = (0, 0)
    slots = [None] + [n for n, _, _ in nodes]
    pools = {n: p for n, _, p in nodes}
    cap = {n: g for n, g, _ in nodes}
    pods = [(j, gpus) for j, count, gpus in jobs for _ in range(count)]
    for choice in itertools.product(slots, repeat=len(pods)):
        used = dict.fromkeys(cap, 0)
        ok = True
        where: dict[str, set] = {}
        for (j, gpus), n in zip(pods, choice, strict=True):
            if n is None:
                continue
            used[n] += gpus
            where.setdefault(j, set()).add(pools[n])
        if any(used[n] > cap[n] for n in cap) or any(len(p) > 1 for p in where.values()):
            continue
        held = dict.fromkeys(quota, 0)
        for j, count, gpus in jobs:
            if j in where:
                held[next(iter(where[j]))] += count * gpus
        if any(held[f] > quota[f] for f in quota):
            ok = False
        if ok:
            placed = [n for n in choice if n is not None]
            count = {
                j: sum(1 for (pj, _), n in zip(pods, choice, strict=True) if pj == j and n)
                for j, *_ in jobs
            }
            whole = sum(1 for j, c, _ in jobs if count[j] == c)
            best = max(best, (whole, len(placed)))
    return best


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    gpus=st.lists(st.sampled_from([4, 8]), min_size=2, max_size=3),
    jobs=st.lists(st.tuples(st.integers(1, 2), st.sampled_from([2, 4, 8])), min_size=1, max_size=3),
    quota_a=st.sampled_from([0, 4, 8, 16]),
    quota_b=st.sampled_from([0, 4, 8, 16]),
)
def test_exact_matches_brute_force(gpus, jobs, quota_a, quota_b):
    nodes = [(f"n{i}", g, "a" if i % 2 == 0 else "b") for i, g in enumerate(gpus)]
    named = [(f"j{i}", count, g) for i, (count, g) in enumerate(jobs)]
    objs = [namespace("ml"), flavor("a", pool="a"), flavor("b", pool="b")]
    objs += [node(n, g, pool=p) for n, g, p in nodes]
    objs += [cluster_queue("cq", [("a", quota_a), ("b", quota_b)]), local_queue("ml", "q", "cq")]
    objs += [job("ml", j, "q", count, g, i) for i, (j, count, g) in enumerate(named)]
    c, g, x = solve_both(objs)
    assert x.status.value == "OPTIMAL"
    want = _brute(nodes, named, {"a": quota_a, "b": quota_b})
    assert (x.objective["admitted[p=0]"], x.objective["placed"]) == want
    assert (g.objective["admitted[p=0]"], g.objective["placed"]) <= want


def test_a_recorded_admission_is_kept_and_rechecked():
    path = ROOT / "tests" / "fixtures" / "kueue_engines" / "recorded-admission.yaml"
    c = gp.load(path)
    g = gp.solve(c, "greedy")
    x = gp.solve(c, "exact", hint=g)
    assert validate(c, g) == [] and validate(c, x) == []
    (w,) = g.kueue.workloads.values()
    assert w.recorded and w.admitted
    assert w.recheck == "would choose main: a100 (recorded h100)"
    # its pod (made from the Workload's template) goes where the recorded flavor says
    assert {o.node for o in g.pods.values()} == {"h100-1"}
    assert {o.node for o in x.pods.values()} == {"h100-1"}


def test_partial_admission_in_both_engines():
    """A Job with kueue.x-k8s.io/job-min-parallelism: Kueue admits the largest count that fits the
    quota (2 of 4 pods of 4 GPUs in 8 GPUs of quota), the exact engine may too (it said 'model
    mismatch' before it modelled minCount), and neither runs the Workload whole."""
    objs = BASE + [cluster_queue("cq", [("a", 8)]), local_queue("ml", "q", "cq")]
    j = job("ml", "par", "q", 4, 4, 0)
    j["metadata"]["annotations"] = {"kueue.x-k8s.io/job-min-parallelism": "2"}
    c, g, x = solve_both(objs + [j])
    (w,) = g.kueue.workloads.values()
    assert w.admitted and w.podsets[0].count == 2 and not w.running
    assert len(g.placements()) == 2
    (xw,) = x.kueue.workloads.values()
    assert xw.admitted and xw.podsets[0].count == 2 and len(x.placements()) == 2
    d = gp.diff(c, greedy=g, optimal=x)
    assert d.classification in ("identical", "tie-break", "equivalent") and not d.problems


def _rack_node(name: str, rack: str, gpus: int, pool: str) -> dict:
    n = node(name, gpus, pool=pool)
    n["metadata"]["labels"]["cloud.example.com/rack"] = rack
    return n


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    racks=st.lists(
        st.lists(st.sampled_from([4, 8]), min_size=1, max_size=3), min_size=1, max_size=3
    ),
    jobs=st.lists(
        st.tuples(st.integers(1, 3), st.sampled_from([2, 4, 8]), st.booleans(), st.booleans()),
        min_size=1,
        max_size=4,
    ),
    quota=st.sampled_from([8, 16, 32]),
    tas=st.booleans(),
)
def test_kueue_greedy_is_always_inside_the_exact_model(racks, jobs, quota, tas):
    """Whatever Kueue admits and kube-scheduler then places is a placement the exact model
    accepts: no diff of a Kueue snapshot is a model mismatch (random racks, TAS or plain flavors,
    rack-held jobs, partial admission, two ClusterQueues in a cohort)."""
    rack_label = "cloud.example.com/rack"
    objs: list[dict] = [namespace("ml"), namespace("b")]
    for r, gpus in enumerate(racks):
        for i, g in enumerate(gpus):
            objs.append(_rack_node(f"n{r}-{i}", f"r{r}", g, "a"))
    fl = flavor("a", pool="a")
    if tas:
        fl["spec"]["topologyName"] = "racks"
        objs.append(
            {
                "apiVersion": "kueue.x-k8s.io/v1beta2",
                "kind": "Topology",
                "metadata": {"name": "racks"},
                "spec": {
                    "levels": [{"nodeLabel": rack_label}, {"nodeLabel": "kubernetes.io/hostname"}]
                },
            }
        )
    objs += [
        fl,
        cluster_queue("qa", [("a", quota)], cohort="c"),
        cluster_queue("qb", [("a", quota // 2)], cohort="c"),
    ]
    objs += [local_queue("ml", "q", "qa"), local_queue("b", "q", "qb")]
    for i, (pods, gpus, held, partial) in enumerate(jobs):
        j = job("ml" if i % 2 == 0 else "b", f"j{i}", "q", pods, gpus, i)
        if held and tas:
            j["spec"]["template"]["metadata"] = {
                "annotations": {"kueue.x-k8s.io/podset-required-topology": rack_label}
            }
        if partial and pods > 1:
            j["metadata"]["annotations"] = {"kueue.x-k8s.io/job-min-parallelism": "1"}
        objs.append(j)
    c, g, x = solve_both(objs)
    d = gp.diff(c, greedy=g, optimal=x)
    assert d.classification != "model-mismatch", d.problems


def test_a_tie_in_kueues_order_that_decides_is_said():
    """Two jobs of equal priority and creation time, quota for one: Kueue orders them by UID, which
    a job not yet submitted does not have, so which one it admits is random; gangplan takes them by
    name and says so."""
    objs = BASE + [
        cluster_queue("cq", [("a", 8)]),
        local_queue("ml", "q", "cq"),
        job("ml", "x", "q", 1, 8, 0),
        job("ml", "y", "q", 1, 8, 0),
    ]
    _, g, _ = solve_both(objs)
    got = outcomes(g)
    assert got["x"][0] and not got["y"][0]
    (tie,) = g.kueue.ties
    assert "ml/job-x-" in tie and "ml/job-y-" in tie and "random" in tie
    objs[-1]["metadata"]["creationTimestamp"] = "2026-12-01T10:01:00Z"  # no longer a tie
    _, g, _ = solve_both(objs)
    assert g.kueue.ties == []
