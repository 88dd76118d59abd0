"""The exact engine's topology beyond the required domain: growth lock-in of a required topology,
the ``gangplan.io/preferred-topology`` packing tier and the level-weighted ``spread`` tier.

Every optimum is worked out by hand in the test's comment; every Result goes through validate().
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gangplan.bench.generators.builders import (
    composite_pod_group_object,
    node_object,
    pod_group_object,
    pod_object,
    to_cluster,
    topology_object,
)
from gangplan.bench.generators.small_snapshots import small_mixed
from gangplan.cli import app
from gangplan.io.loader import load_objects, load_snapshot
from gangplan.models.result import Status
from gangplan.models.well_known import GPU, HOSTNAME, RACK, ZONE
from gangplan.solver.exact import check_feasible, solve_exact
from gangplan.solver.exact.locality import PREFERRED_ANNOTATION, SPREAD, TOPOLOGY
from gangplan.solver.greedy import solve_greedy
from gangplan.solver.validate import validate

SHOWCASE = (
    Path(__file__).resolve().parent.parent / "scenarios" / "showcase" / "tas-preferred-nvlink.yaml"
)
CLIQUE = "nvidia.com/gpu.clique"
BLOCK = "cloud.google.com/gce-topology-block"


def cluster(*objs):
    return load_objects(
        [o for group in objs for o in (group if isinstance(group, list) else [group])]
    )


def solve(c, **kw):
    kw.setdefault("time_limit", 10.0)
    kw.setdefault("workers", 1)
    r = solve_exact(c, **kw)
    assert [str(v) for v in validate(c, r)] == []
    return r


def shared(r) -> dict[str, float]:
    return {k: v for k, v in r.objective.items() if k.startswith("admitted") or k == "placed"}


def node(name, labels, **kw):
    return node_object(name, labels={HOSTNAME: name, **labels}, **kw)


def gang(name, size, min_count, *, requests, prefer=None, bound_on=(), **group_kw):
    """A gang PodGroup with ``size`` pending members (plus members already bound on ``bound_on``)."""
    ann = {PREFERRED_ANNOTATION: prefer} if prefer else None
    objs = [pod_group_object(name, min_count=min_count, annotations=ann, **group_kw)]
    for i, n in enumerate(bound_on):
        objs.append(
            pod_object(f"{name}-run-{i}", group=name, node_name=n, requests=requests, created=0)
        )
    for i in range(size):
        objs.append(pod_object(f"{name}-{i}", group=name, requests=requests, created=i + 1))
    return objs


def domains_of(c, r, group: str, key: str) -> set[str]:
    by_name = {n.name: n for n in c.nodes}
    return {
        by_name[node].labels.get(key, "")
        for pod, node in r.placements().items()
        if pod.startswith(f"default/{group}-")
    }


# ---- growth lock-in of a required topology ----------------------------------------------------
def lock_in_cluster(zone_a_cpu: str):
    # Gang g (minCount 3, topology zone) has g-run-0 bound on a0 (1 of a0's cpus). Zone b is idle
    # and roomy, so LeastAllocated's tie-break would rather go there; the bound member pins zone a.
    nodes = [
        node("a0", {ZONE: "a"}, cpu="2"),
        node("a1", {ZONE: "a"}, cpu=zone_a_cpu),
        node("b0", {ZONE: "b"}, cpu="8"),
        node("b1", {ZONE: "b"}, cpu="8"),
    ]
    return cluster(
        *nodes, gang("g", 2, 3, requests={"cpu": "1"}, topology_key=ZONE, bound_on=["a0"])
    )


def test_new_pods_of_a_group_bound_in_one_zone_stay_in_that_zone():
    c = lock_in_cluster("1")
    r = solve(c)
    assert shared(r) == {"admitted[p=0]": 1.0, "placed": 2.0}
    assert sorted(r.placements().values()) == ["a0", "a1"]
    assert r.groups["default/g"].domain == f"{ZONE}=a"


def test_a_group_bound_in_a_full_zone_cannot_grow_into_another_zone():
    # a1 has no room: zone a takes 1 more pod, minCount 3 needs 2; zone b may not be used.
    c = lock_in_cluster("0")
    r = solve(c)
    assert shared(r) == {"admitted[p=0]": 0.0, "placed": 0.0}
    verdict = check_feasible(c, {"default/g-0": "b0", "default/g-1": "b1"})
    assert verdict == ["topology: default/g-0 on node b0", "topology: default/g-1 on node b1"]


def test_a_sibling_under_a_zone_constrained_composite_grows_into_the_zone_a_bound_sibling_uses():
    # Root (topology zone, minGroupCount 2): child c0 already runs on a0 (zone a), child c1 (2
    # pods) is pending. Zone b is idle, zone a has room for exactly c1: c1 goes to zone a.
    nodes = [
        node("a0", {ZONE: "a"}, cpu="2"),
        node("a1", {ZONE: "a"}, cpu="1"),
        node("b0", {ZONE: "b"}, cpu="8"),
    ]
    c = cluster(
        *nodes,
        composite_pod_group_object("root", min_group_count=2, topology_key=ZONE),
        gang("c0", 0, 1, requests={"cpu": "1"}, parent="root", bound_on=["a0"]),
        gang("c1", 2, 2, requests={"cpu": "1"}, parent="root"),
    )
    r = solve(c)
    assert shared(r) == {"admitted[p=0]": 1.0, "placed": 2.0}
    assert sorted(r.placements().values()) == ["a0", "a1"]


def test_a_preferred_group_with_a_bound_member_packs_into_that_members_clique():
    # g-run-0 runs in clique y; x and y both have room for the 2 new pods. Packed only in y.
    nodes = [node(f"{c}{i}", {CLIQUE: c}, cpu="4") for c in "xy" for i in range(2)]
    c = cluster(*nodes, gang("g", 2, 3, requests={"cpu": "1"}, prefer=CLIQUE, bound_on=["y1"]))
    r = solve(c)
    assert shared(r) == {"admitted[p=0]": 1.0, "placed": 2.0}
    assert domains_of(c, r, "g", CLIQUE) == {"y"}
    assert r.objective[TOPOLOGY] == 2.0


# ---- the preferred level: the showcase and the fallback ---------------------------------------
def test_the_showcase_gang_greedy_scatters_over_two_cliques_lands_in_one_clique_in_the_optimum():
    c = load_snapshot(SHOWCASE)
    greedy = solve_greedy(c)
    assert validate(c, greedy) == []
    assert domains_of_ml(c, greedy) == {"nvl-a.0", "nvl-b.0"}
    r = solve(c, hint=greedy)
    assert r.status == Status.OPTIMAL
    assert shared(r) == shared(greedy) == {"admitted[p=0]": 1.0, "placed": 4.0}
    assert domains_of_ml(c, r) in ({"nvl-a.0"}, {"nvl-b.0"})
    assert r.objective[TOPOLOGY] == 4.0 and r.objective[SPREAD] == 1.0
    assert r.exact_trace.model.private_classes == 0, (
        "identical pods stay pooled, counted per clique"
    )


def domains_of_ml(c, r) -> set[str]:
    by_name = {n.name: n for n in c.nodes}
    return {
        by_name[n].labels[CLIQUE] for p, n in r.placements().items() if p.startswith("ml/train-")
    }


def two_block_cluster():
    # Block b0: cliques c0 and c1 with 2 idle 4-GPU trays each; block b1: clique c2 with 2 trays.
    # Tray order puts b1 first, so first-fit and node-order ties lean to crossing blocks.
    objs = [topology_object("t", [BLOCK, CLIQUE, HOSTNAME])]
    for blk, clq in (("b1", "c2"), ("b0", "c0"), ("b0", "c1")):
        objs += [node(f"{clq}-{i}", {BLOCK: blk, CLIQUE: clq}, cpu="16", gpus=4) for i in range(2)]
    return objs


def test_a_preferred_group_no_clique_can_hold_climbs_to_one_block_instead_of_two():
    # 6 pods x 2 GPUs = 12 GPUs; a clique has 8: no clique fits, so nothing is packed (topology 0).
    # Fallback as in Kueue: one block (c0 + c1 in b0) rather than c2 + a b0 clique. Spread weights:
    # clique max excess 2 -> weight 1; block max excess 1 -> weight 1 + 2 = 3; C = 3 + 2 = 5.
    # Optimum cost: 0 extra blocks, 1 extra clique = 1, so spread = 4.
    c = cluster(
        two_block_cluster(), gang("g", 6, 6, requests={"cpu": "1", GPU: "2"}, prefer=CLIQUE)
    )
    r = solve(c)
    assert shared(r) == {"admitted[p=0]": 1.0, "placed": 6.0}
    assert domains_of(c, r, "g", BLOCK) == {"b0"}
    assert r.objective[TOPOLOGY] == 0.0
    assert r.objective[SPREAD] == 4.0


def test_a_heterogeneous_preferred_gang_packs_both_pod_shapes_into_one_clique():
    # 2 pods x 2 GPUs and 2 pods x 1 GPU (6 GPUs): c2's two trays hold them (8 GPUs); pooled
    # per-clique counts of two classes must decode onto the same clique's trays.
    objs = gang("g", 2, 4, requests={"cpu": "1", GPU: "2"}, prefer=CLIQUE)
    objs += [
        pod_object(f"g-small-{i}", group="g", requests={"cpu": "1", GPU: "1"}, created=9)
        for i in range(2)
    ]
    c = cluster(two_block_cluster(), objs)
    r = solve(c)
    assert shared(r) == {"admitted[p=0]": 1.0, "placed": 4.0}
    assert len(domains_of(c, r, "g", CLIQUE)) == 1
    assert r.objective[TOPOLOGY] == 4.0


def test_a_required_block_with_a_preferred_clique_packs_inside_the_block_with_pooled_counts():
    # Required: one block; preferred: one clique. 4 pods x 2 GPUs fit any clique: packed (4).
    # The class stays pooled: its per-clique counts are gated by the block literals.
    c = cluster(
        two_block_cluster(),
        gang("g", 4, 4, requests={"cpu": "1", GPU: "2"}, prefer=CLIQUE, topology_key=BLOCK),
    )
    r = solve(c)
    assert shared(r) == {"admitted[p=0]": 1.0, "placed": 4.0}
    assert len(domains_of(c, r, "g", CLIQUE)) == 1
    assert r.objective[TOPOLOGY] == 4.0
    assert r.exact_trace.model.private_classes == 0


def test_pooled_per_rack_counts_still_obey_the_required_zone():
    # Required zone, preferred rack. Each zone has 2 racks of one 1-pod and one 2-pod node (3
    # pods per zone); a gang of 4 fits only across zones: it is not admitted.
    objs = [topology_object("t", [ZONE, RACK, HOSTNAME])]
    for z in "ab":
        objs += [node(f"{z}{k}", {ZONE: z, RACK: f"{z}-r{k}"}, cpu=str(k + 1)) for k in range(2)]
    c = cluster(objs, gang("g", 4, 4, requests={"cpu": "1"}, prefer=RACK, topology_key=ZONE))
    r = solve(c)
    assert shared(r) == {"admitted[p=0]": 0.0, "placed": 0.0}
    assert r.exact_trace.model.private_classes == 0


def test_a_preferred_child_under_a_zone_constrained_composite_gets_per_node_counts():
    # The composite's zone spans its children, so the child's class is private; it still packs.
    objs = [topology_object("t", [ZONE, RACK, HOSTNAME])]
    objs += [node(f"{z}{k}", {ZONE: z, RACK: f"{z}-r{k}"}, cpu="2") for z in "ab" for k in range(2)]
    c = cluster(
        objs,
        composite_pod_group_object("root", min_group_count=1, topology_key=ZONE),
        gang("c0", 2, 2, requests={"cpu": "1"}, parent="root", prefer=RACK),
    )
    r = solve(c)
    assert shared(r) == {"admitted[p=0]": 1.0, "placed": 2.0}
    assert len(domains_of(c, r, "c0", RACK)) == 1
    assert r.exact_trace.model.private_classes == 1


def test_the_preference_never_costs_an_admission():
    # Clique p: 3 idle trays (12 GPUs); clique q: one idle tray and one with 2 GPUs free (6).
    # b needs 2 whole trays in one clique (required): only p. a (4 x 2 GPUs, prefers a clique)
    # packed fits only in p (q has 6 < 8), and then p keeps at most 1 whole tray: b is out.
    # Optimum: both admitted, a spread (3 pods in q, 1 in p), topology tier 0.
    nodes = [node(f"p{i}", {CLIQUE: "p"}, cpu="16", gpus=4) for i in range(3)]
    nodes += [
        node("q0", {CLIQUE: "q"}, cpu="16", gpus=4),
        node("q1", {CLIQUE: "q"}, cpu="16", gpus=4),
    ]
    busy = pod_object("busy", namespace="other", node_name="q1", requests={"cpu": "1", GPU: "2"})
    c = cluster(
        *nodes,
        busy,
        gang("a", 4, 4, requests={"cpu": "1", GPU: "2"}, prefer=CLIQUE),
        gang("b", 2, 2, requests={"cpu": "1", GPU: "4"}, topology_key=CLIQUE),
    )
    r = solve(c)
    assert shared(r) == {"admitted[p=0]": 2.0, "placed": 6.0}
    assert domains_of(c, r, "a", CLIQUE) == {"p", "q"}
    assert r.objective[TOPOLOGY] == 0.0


def test_a_preferred_key_no_node_carries_rewards_nothing_and_places_as_usual():
    nodes = [node(f"n{i}", {ZONE: "z"}, cpu="2") for i in range(2)]
    c = cluster(*nodes, gang("g", 3, 3, requests={"cpu": "1"}, prefer="example.com/no-such-label"))
    r = solve(c)
    assert shared(r) == {"admitted[p=0]": 1.0, "placed": 3.0}
    assert TOPOLOGY not in r.objective and SPREAD not in r.objective
    assert r.exact_trace.model.private_classes == 0


def test_without_the_annotation_the_default_model_has_no_locality_tier_and_no_private_class():
    c = cluster(two_block_cluster(), gang("g", 6, 6, requests={"cpu": "1", GPU: "2"}))
    r = solve(c)
    assert TOPOLOGY not in r.objective and SPREAD not in r.objective
    assert r.exact_trace.model.private_classes == 0


# ---- network distance: the spread tier on a 2-level tree ---------------------------------------
def zone_rack_cluster():
    # Zone z0: racks r0, r1, r2 of two 1-pod nodes each; zone z1: rack r3 of two 2-pod nodes.
    # Levels zone > rack > hostname (hostname domains are single nodes: not measured).
    objs = [topology_object("t", [ZONE, RACK, HOSTNAME])]
    objs += [node(f"r3-{i}", {ZONE: "z1", RACK: "r3"}, cpu="2") for i in range(2)]
    objs += [
        node(f"r{k}-{i}", {ZONE: "z0", RACK: f"r{k}"}, cpu="1") for k in range(3) for i in range(2)
    ]
    return objs


def test_compact_prefers_three_racks_in_one_zone_over_two_racks_in_two_zones():
    # 6 one-cpu pods. X: z0's three racks (1 zone, 3 racks); Y: r3 + one z0 rack (2 zones, 2
    # racks). Unweighted both span 1 + 3 = 2 + 2 = 4 domains; weighted, rack max excess 3 -> weight
    # 1, zone max excess 1 -> weight 1 + 3 = 4, C = 4 + 3 = 7: X costs 2 (spread 5), Y 4 + 1 = 5
    # (spread 2). The optimum is X.
    c = cluster(zone_rack_cluster(), gang("g", 6, 6, requests={"cpu": "1"}))
    r = solve(c, objective="compact")
    assert shared(r) == {"admitted[p=0]": 1.0, "placed": 6.0}
    assert domains_of(c, r, "g", ZONE) == {"z0"}
    assert r.objective[SPREAD] == 5.0
    assert TOPOLOGY not in r.objective


def test_compact_packs_a_gang_that_fits_one_rack_into_that_rack():
    # 4 pods fit r3 alone: 1 zone, 1 rack, cost 0, spread = C (rack max 3 x 1 + zone max 1 x 4).
    c = cluster(zone_rack_cluster(), gang("g", 4, 4, requests={"cpu": "1"}))
    r = solve(c, objective="compact")
    assert set(r.placements().values()) == {"r3-0", "r3-1"}
    assert r.objective[SPREAD] == 7.0


def test_the_cli_accepts_the_compact_objective(tmp_path: Path):
    out = tmp_path / "r.json"
    res = CliRunner().invoke(
        app,
        [
            "solve",
            str(SHOWCASE),
            "--engine",
            "exact",
            "--objective",
            "compact",
            "--workers",
            "1",
            "--out",
            str(out),
        ],
    )
    assert res.exit_code == 0, res.output
    data = json.loads(out.read_text())
    assert data["params"]["objective"] == "compact"
    assert data["objective"][TOPOLOGY] == 4.0


@pytest.mark.parametrize("objective", ["default", "compact"])
def test_the_locality_tiers_are_proven_and_reported_with_their_bounds(objective):
    c = load_snapshot(SHOWCASE)
    r = solve(c, objective=objective)
    assert r.status == Status.OPTIMAL and r.gap == 0.0
    assert r.bound[TOPOLOGY] == r.objective[TOPOLOGY] == 4.0
    assert r.bound[SPREAD] == r.objective[SPREAD]


# ---- random snapshots: the locality tiers never change validity or the shared tiers ------------
@pytest.mark.parametrize("seed", range(0, 40, 2))
def test_on_random_snapshots_preferences_keep_results_valid_and_the_shared_optimum(seed):
    # Every PodGroup prefers a zone, rack or host (some nodes lack the zone and rack labels); with
    # the greedy hint, default and compact objectives, the result is valid and its admitted and
    # placed tiers equal the optimum without any annotation (the locality tiers come after them).
    objs = small_mixed(seed)
    plain = solve(to_cluster(objs))
    keys = (ZONE, RACK, HOSTNAME)
    for i, o in enumerate(objs):
        if o["kind"] == "PodGroup":
            o["metadata"].setdefault("annotations", {})[PREFERRED_ANNOTATION] = keys[(seed + i) % 3]
    c = to_cluster(objs)
    for objective in ("default", "compact"):
        r = solve(c, objective=objective, hint=solve_greedy(c))
        assert r.status == plain.status == Status.OPTIMAL
        assert shared(r) == shared(plain)
