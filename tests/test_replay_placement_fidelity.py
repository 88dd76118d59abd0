"""The replay's placer against the greedy engine on the same state (issue 22: one implementation
of the workload cycle's placement algorithm).

A random small cluster (racks of 8-GPU nodes), random running jobs placed by the replay, and
one pending gang with a required topology key: the placer's decision must be the one
:func:`gangplan.solver.greedy.solve_greedy` makes on :func:`gangplan.replay.shadow.epoch_objects`
of that state (the objects ``shadow``, ``optimal`` and preemption already solve), node for
node, at every kube version. Every engine Result goes through the validator.
"""

from __future__ import annotations

import random
from collections import Counter

import pytest

from gangplan.io.loader import load_objects
from gangplan.models.cluster import Cluster
from gangplan.models.version import KubeVersion
from gangplan.models.well_known import GPU
from gangplan.replay.engine import Placer
from gangplan.replay.policies import Policy, builtin_policy
from gangplan.replay.shadow import NAMESPACE, epoch_objects, job_key
from gangplan.replay.timed import engine_profile
from gangplan.replay.traces import ReplayJob
from gangplan.solver.greedy import GreedySession, solve_greedy
from gangplan.solver.greedy.testing import make_cluster, make_node
from gangplan.solver.validate import validate

GI = 2**30
VERSIONS = [KubeVersion.V1_35, KubeVersion.V1_36, KubeVersion.V1_37]


def _state(
    rng: random.Random, version: KubeVersion
) -> tuple[Cluster, list[ReplayJob], dict[int, list[str]]]:
    """Nodes in 2-4 racks of 1-4 nodes (cpu varies so cpu/memory scores differ), 0-6 running
    single-pod or gang jobs, the last job pending with ``rack`` required."""
    nodes = []
    for r in range(rng.randint(2, 4)):
        for k in range(rng.randint(1, 4)):
            nodes.append(
                make_node(
                    f"r{r}n{k}",
                    cpu=rng.choice([32000, 64000, 96000]),
                    memory=rng.choice([256, 512]) * GI,
                    extra={GPU: 8},
                    labels={"rack": f"rack-{r}"},
                )
            )
    rng.shuffle(nodes)  # a rack's nodes need not be adjacent in snapshot order
    jobs = []
    for j in range(rng.randint(0, 6)):
        jobs.append(
            ReplayJob(
                name=f"run{j}",
                submit=0,
                duration=100,
                workers=rng.randint(1, 2),
                cpu_milli=rng.choice([1000, 8000, 16000]),
                memory_mib=rng.choice([1024, 32768]),
                gpu=rng.choice([1, 2, 4, 8]),
            )
        )
    jobs.append(
        ReplayJob(
            name="gang",
            submit=0,
            duration=100,
            workers=rng.randint(2, 4),
            cpu_milli=rng.choice([2000, 8000]),
            memory_mib=4096,
            gpu=rng.choice([1, 2, 4, 8]),
            required_topology_key="rack",
        )
    )
    return make_cluster(nodes).model_copy(update={"kube_version": version}), jobs, {}


def _placer(base: Cluster, seed: int) -> Placer:
    default = builtin_policy("default")
    return Placer(
        base,
        Policy("default-first", default.profile, default.selection, "first"),
        seed=seed,
        typical=[],
    )


def _engine(placer: Placer, jobs: list[ReplayJob], running: dict[int, list[str]], k: int):
    base = placer.cluster
    objects = epoch_objects(base.nodes, jobs, running, [k])
    loaded = load_objects(objects, "<fidelity>", kube_version=base.kube_version)
    cluster = Cluster(
        nodes=loaded.nodes,
        pods=loaded.pods,
        pod_groups=loaded.pod_groups,
        topologies=base.topologies,
        priority_classes=base.priority_classes,
        profile=engine_profile(placer),
        kube_version=base.kube_version,
    )
    res = solve_greedy(cluster, tie_break="first", seed=0, top_k=0, preemption=False)
    assert validate(cluster, res) == []
    return res


def _decide(seed: int, version: KubeVersion):
    rng = random.Random(seed)
    base, jobs, running = _state(rng, version)
    placer = _placer(base, seed)
    for k, job in enumerate(jobs[:-1]):
        if placer.place(job, f"j{k}"):
            running[k] = placer.nodes_of(f"j{k}")
    k = len(jobs) - 1
    ok = placer.place(jobs[k], f"j{k}")
    mine = Counter(placer.nodes_of(f"j{k}")) if ok else Counter()
    res = _engine(placer, jobs, running, k)
    prefix = f"{NAMESPACE}/{job_key(k)}-"
    theirs = Counter(o.node for key, o in res.pods.items() if key.startswith(prefix) and o.node)
    return mine, theirs, res


@pytest.mark.parametrize("version", VERSIONS)
def test_a_rack_gang_goes_where_the_engine_puts_it(version):
    placed = 0
    for seed in range(40):
        mine, theirs, _ = _decide(seed, version)
        assert mine == theirs, (seed, mine, theirs)
        placed += bool(mine)
    assert 10 <= placed < 40  # both outcomes are exercised


def _two_racks() -> tuple[Cluster, list[ReplayJob]]:
    nodes = [
        make_node(f"{r}{k}", cpu=64000, memory=256 * GI, extra={GPU: 8}, labels={"rack": r})
        for r in "ab"
        for k in range(2)
    ]
    jobs = [
        ReplayJob(
            name="gpu-light",
            submit=0,
            duration=100,
            workers=1,
            cpu_milli=1000,
            memory_mib=1024,
            gpu=4,
        ),  # lands in a
        ReplayJob(
            name="cpu-heavy",
            submit=0,
            duration=100,
            workers=1,
            cpu_milli=48000,
            memory_mib=1024,
            gpu=0,
        ),
        ReplayJob(
            name="gang",
            submit=0,
            duration=100,
            workers=2,
            cpu_milli=2000,
            memory_mib=4096,
            gpu=4,
            required_topology_key="rack",
        ),
    ]
    return make_cluster(nodes), jobs


def test_placement_bin_packing_picks_the_fuller_rack_not_the_one_with_fewest_free_gpus():
    """Rack a keeps 12 GPUs free (a 4-GPU pod), rack b 16 but one node 3/4 busy on cpu. The
    default profile's PlacementBinPacking scores cpu and memory (NodeResourcesFit's default
    resources), so the gang of 2 x 4 GPUs goes to rack b, where the engine puts it too. The
    rule this slice replaced (the domain with the fewest free GPUs first) chose rack a."""
    base, jobs = _two_racks()
    placer = _placer(base, 0)
    assert placer.place(jobs[0], "j0")
    assert placer.nodes_of("j0") == ["a0"]
    running = {0: ["a0"]}
    placer.force(jobs[1], "j1", ["b0"])
    running[1] = ["b0"]
    assert placer.place(jobs[2], "j2")
    got = sorted(placer.nodes_of("j2"))
    res = _engine(placer, jobs, running, 2)
    engine = sorted(
        o.node for key, o in res.pods.items() if key.startswith(f"{NAMESPACE}/{job_key(2)}-")
    )
    assert got == engine
    assert {n[0] for n in got} == {"b"}  # the rack of the cpu-heavy pod, not the GPU-fuller one
    decision = res.trace.groups[f"{NAMESPACE}/{job_key(2)}"].placements
    assert (decision.generated, decision.scored, decision.chosen) == (2, True, "b")


def test_equal_racks_are_drawn_from_the_seed_as_often_as_the_engine_draws_them():
    """Two identical empty racks: kube-scheduler's findBestPlacement draws between equal totals
    (``rand.Int()``). Over 200 seeds the placer and the engine each pick each rack about half
    the time (binomial: 200 draws at p = 1/2 fall in 70..130 with probability > 0.9999)."""
    nodes = [
        make_node(f"{r}{k}", cpu=64000, memory=256 * GI, extra={GPU: 8}, labels={"rack": r})
        for r in "ab"
        for k in range(2)
    ]
    base = make_cluster(nodes)
    job = ReplayJob(
        name="gang",
        submit=0,
        duration=100,
        workers=2,
        cpu_milli=2000,
        memory_mib=4096,
        gpu=8,
        required_topology_key="rack",
    )
    default = builtin_policy("default")
    assert default.tie_break == "random"
    mine: Counter = Counter()
    theirs: Counter = Counter()
    for seed in range(200):
        placer = Placer(base, default, seed=seed, typical=[])
        assert placer.place(job, "j0")
        [rack] = {n[0] for n in placer.nodes_of("j0")}
        mine[rack] += 1
        objects = epoch_objects(placer.cluster.nodes, [job], {}, [0])
        loaded = load_objects(objects, "<ties>", kube_version=base.kube_version)
        cluster = Cluster(
            nodes=loaded.nodes,
            pods=loaded.pods,
            pod_groups=loaded.pod_groups,
            profile=engine_profile(placer),
            kube_version=base.kube_version,
        )
        res = solve_greedy(cluster, tie_break="random", seed=seed, top_k=0, preemption=False)
        assert validate(cluster, res) == []
        [erack] = {o.node[0] for o in res.pods.values() if o.node}
        theirs[erack] += 1
    for counts in (mine, theirs):
        assert set(counts) == {"a", "b"} and all(70 <= c <= 130 for c in counts.values()), counts


@pytest.mark.parametrize("policy", ["default-first", "fgd", "bestfit"])
def test_reusing_unchanged_placement_evaluations_changes_nothing(monkeypatch, policy):
    """A placement's evaluation is reused while its nodes are unchanged (GreedySession._evaluate_or_reuse).
    With ``first`` ties that is exact: 400 random arrivals and departures of rack gangs and
    single pods give the same nodes, devices and scan starts with and without reuse."""
    rng = random.Random(7)
    nodes = [
        make_node(
            f"r{r}n{k}",
            cpu=rng.choice([32000, 64000]),
            memory=256 * GI,
            extra={GPU: 8},
            labels={"rack": f"rack-{r}"},
        )
        for r in range(6)
        for k in range(rng.randint(2, 5))
    ]
    base = make_cluster(nodes)
    ops = []
    live: list[str] = []
    for j in range(400):
        if live and rng.random() < 0.4:
            ops.append(("release", live.pop(rng.randrange(len(live))), None))
            continue
        keyed = rng.random() < 0.7
        job = ReplayJob(
            name=f"x{j}",
            submit=0,
            duration=1,
            workers=rng.randint(2, 4) if keyed else 1,
            cpu_milli=rng.choice([1000, 4000]),
            memory_mib=2048,
            gpu=rng.choice([1, 2, 4]),
            required_topology_key="rack" if keyed else "",
        )
        ops.append(("place", f"j{j}", job))
        live.append(f"j{j}")

    def run(reuse: bool):
        monkeypatch.setattr(GreedySession, "reuse_evaluations", reuse)
        default = builtin_policy("default")
        pol = (
            Policy("default-first", default.profile, default.selection, "first")
            if policy == "default-first"
            else builtin_policy(policy)
        )
        placer = Placer(base, pol, seed=3, typical=[])
        out = []
        for op, inst, job in ops:
            if op == "release":
                if inst in placer.pods:
                    placer.release(inst)
                continue
            ok = placer.place(job, inst)
            out.append(
                (
                    inst,
                    ok,
                    placer.nodes_of(inst) if ok else None,
                    placer.devices_of_job(inst) if ok else None,
                    placer.snap.next_start_node_index,
                )
            )
        return out, placer.reused

    plain, none = run(False)
    reused, hits = run(True)
    assert none == 0 and hits >= 40, hits
    assert reused == plain
    assert sum(ok for _, ok, *_ in plain) > 100
