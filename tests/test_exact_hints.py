"""The exact engine's hint functions agree with its constraints (issue 16, item 5).

Every auxiliary variable has a Python function computing its value from a placement
(``ExactModel.new_aux``), and every tier a ``Tier.value``: they make hints complete, and
:func:`gangplan.solver.exact.solve.solve_phases` adds ``tier >= value(incumbent)``, so a function
that drifts from the constraints makes a hint infeasible or, worse, cuts off the optimum. On random
small models (mixed groups and constraints, preemption, required pod affinity in every encoding,
composites with topology, locality tiers) and for several valid placements of each (placing
nothing, the starting solution built from the greedy result, the exact optimum, the optimum less
one entity), this checks:

* the hint is complete: every variable of the model has a value;
* every variable fixed to its hinted value, the model is feasible and each tier's expression
  equals the Python tier value (so no auxiliary value contradicts a constraint);
* only the placement fixed (per-node and pooled counts, per-domain counts, evictions), the
  auxiliaries free: the best each tier's expression can reach is exactly the Python value (the
  Python value never promises more than the model gives the placement, nor less).

A failing example names the auxiliary variables whose hinted value the model rejects, with the
function that computed it (temporarily raising ``spread._lower``'s value by one, or zeroing the
levelled affinity form's levels, fails it that way). Seeded (``derandomize``); about 20 s.
"""

from __future__ import annotations

import copy

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ortools.sat.python import cp_model

from gangplan.bench.generators.builders import to_cluster
from gangplan.bench.generators.gpu_clusters import gpu_benchmark
from gangplan.bench.generators.scheduler_perf import scheduler_perf_composite
from gangplan.bench.generators.small_snapshots import small_preemption_snapshot
from gangplan.io.loader import load_objects
from gangplan.models.result import Status
from gangplan.models.well_known import ZONE
from gangplan.solver.exact import build_model, solve_exact
from gangplan.solver.exact.build import BuiltModel
from gangplan.solver.exact.locality import PREFERRED_ANNOTATION
from gangplan.solver.exact.preemption import units_of_victims
from gangplan.solver.exact.start.hint import counts_from_placements, hint_values, starting_solution
from gangplan.solver.exact.variables import Counts
from gangplan.solver.greedy import solve_greedy
from gangplan.solver.outcome import build_result, entity_of
from gangplan.solver.validate import validate
from tests.strategies import _DrawChooser, small_snapshots
from tests.test_pod_affinity_rule import specs

SOLVE_SECONDS = 10.0
EXAMPLES = 80


# ---- the check ------------------------------------------------------------------------------------
def _solver() -> cp_model.CpSolver:
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = 1
    solver.parameters.random_seed = 0
    solver.parameters.max_time_in_seconds = SOLVE_SECONDS
    return solver


def _fresh(built: BuiltModel) -> cp_model.CpModel:
    """A copy of the model without objective or hint (the built model stays untouched)."""
    m = built.model.clone()
    m.clear_objective()
    m.clear_hints()
    return m


def placement_indices(built: BuiltModel) -> set[int]:
    """The variables that say where pods go: counts per node or slot, placed counts, evictions,
    per-domain counts of split classes and the topology family's per-domain counts."""
    em = built.em
    out = {var.index for xs in em.x for var in xs.values()}
    out |= {var.index for vs in em.v for var in vs.values()}
    out |= {var.index for var in em.placed} | {var.index for var in em.evict}
    out |= {var.index for parts in em.split.values() for _, var, _ in parts}
    out |= {
        cd.index
        for per in built.confinement.by_class.values()
        for cd, _, _ in per.values()
        if cd is not None
    }
    return out


def _rejected_aux(built: BuiltModel, hinted: dict[int, int]) -> list[str]:
    """Auxiliary variables whose hinted value alone makes the fully fixed model infeasible."""
    out = []
    for var, fn in built.em.aux:
        m = _fresh(built)
        for i, v in hinted.items():
            if i != var.index:
                m.add(m.get_int_var_from_proto_index(i) == v)
        solver = _solver()
        if solver.solve(m) in (cp_model.OPTIMAL, cp_model.FEASIBLE):
            out.append(
                f"aux #{var.index} ({fn.__module__}.{fn.__qualname__}): hinted {hinted[var.index]}, "
                f"the model needs {solver.value(m.get_int_var_from_proto_index(var.index))}"
            )
    return out


def model_accepts_placement(built: BuiltModel, cnt: Counts) -> bool:
    """Is the placement feasible in the model, its auxiliaries left to the solver?"""
    idx, val = hint_values(built.em, cnt)
    hinted = dict(zip(idx, val, strict=True))
    m = _fresh(built)
    for i in sorted(placement_indices(built)):
        m.add(m.get_int_var_from_proto_index(i) == hinted[i])
    return _solver().solve(m) in (cp_model.OPTIMAL, cp_model.FEASIBLE)


def check_hint(built: BuiltModel, cnt: Counts, label: str) -> None:
    idx, val = hint_values(built.em, cnt)
    hinted = dict(zip(idx, val, strict=True))
    n_vars = len(built.model.proto.variables)
    assert len(idx) == len(hinted) == n_vars, (
        f"{label}: the hint sets {len(hinted)} of {n_vars} variables"
    )

    m = _fresh(built)
    for i, v in hinted.items():
        m.add(m.get_int_var_from_proto_index(i) == v)
    solver = _solver()
    status = solver.solve(m)
    assert status in (cp_model.OPTIMAL, cp_model.FEASIBLE), (
        label,
        _rejected_aux(built, hinted) or "placement rejected",
    )
    for t in built.tiers:
        assert solver.value(t.expr) == t.value(cnt), (
            f"{label}: tier {t.name} is {solver.value(t.expr)} in the model, {t.value(cnt)} in Python"
        )

    fixed = placement_indices(built)
    for t in built.tiers:
        m = _fresh(built)
        for i in sorted(fixed):
            m.add(m.get_int_var_from_proto_index(i) == hinted[i])
        m.maximize(t.expr)
        solver = _solver()
        assert solver.solve(m) == cp_model.OPTIMAL, (
            f"{label}: tier {t.name} unsolved with the placement fixed"
        )
        assert round(solver.objective_value) == t.value(cnt), (
            f"{label}: with the placement fixed the model reaches {t.name} = {round(solver.objective_value)}, "
            f"Python says {t.value(cnt)}"
        )


def counts_of(built: BuiltModel, placements: dict[str, str], victims) -> Counts | None:
    cnt, dropped = counts_from_placements(built.em, placements)
    if dropped:
        return None
    evicted = units_of_victims(built.em, victims) if victims else frozenset()
    if evicted is None:
        return None
    cnt.evicted = evicted
    return cnt


def _valid(cluster, placements: dict[str, str], victims) -> bool:
    r = build_result(
        cluster,
        engine="hint-test",
        status=Status.HEURISTIC,
        placements=placements,
        victims=list(victims),
    )
    return not validate(cluster, r)


def _room_taken_by_another(cluster, greedy) -> bool:
    """Whether greedy evicted a pod from a node on which no placed pod may have preempted it (a
    pending pod of higher priority whose preemption policy allows it). Workload-aware preemption
    is asynchronous (rule W of issue 39): while the victims terminate, a higher-priority entity
    that does not preempt (``preemptionPolicy: Never``) may take the freed room and the preemptor
    go elsewhere. The validator accepts that Result; the model only evicts for a preemptor placed
    on the victim's node (see .preemption), so such a start is no placement of the model. So is a
    start that evicted a pending pod it had placed (rule V of issue 39): the model never places a
    pod only to evict it (the hint drops such a victim, :func:`snapshot_victims`, and the room it
    freed may hold a preemptor the model would count as evicting nobody); not checked either."""
    tree = cluster.groups
    placed = greedy.placements()
    by_node: dict[str, list[int]] = {}
    for k, node in placed.items():
        p = cluster.pod_by_key[k]
        g = tree.node(tree.root_of(p.group_key)) if p.group_key else None
        never = tree.preemption_policy(g.entity) if g is not None else p.preemption_policy
        if never != "Never":
            by_node.setdefault(node, []).append(tree.unit_priority(p))
    for v in greedy.victims:
        victim = cluster.pod_by_key[v]
        if not victim.bound:
            return True
        if not any(q > tree.unit_priority(victim) for q in by_node.get(victim.node_name, [])):
            return True
    return False


def check_model(
    cluster, *, objective: str = "default", preemption: bool = False, drop: int = 0
) -> int:
    """Check the hints of several valid placements of one model; returns how many were checked."""
    built = build_model(cluster, objective=objective, preemption=preemption)
    if built.inst.fixed_errors:
        return 0
    checked = 0
    empty = Counts([{} for _ in built.inst.classes])
    check_hint(built, empty, "nothing placed")
    checked += 1
    greedy = solve_greedy(cluster, preemption=preemption)
    start, _ = starting_solution(built, greedy)
    if start is not None and not _room_taken_by_another(cluster, greedy):
        check_hint(built, start, "starting solution from the greedy result")
        checked += 1
    best = solve_exact(
        cluster, time_limit=SOLVE_SECONDS, workers=1, objective=objective, preemption=preemption
    )
    assert [str(v) for v in validate(cluster, best)] == []
    placements = best.placements()
    cnt = counts_of(built, placements, best.victims)
    assert cnt is not None and model_accepts_placement(built, cnt)
    check_hint(built, cnt, "exact optimum")
    checked += 1
    entities = sorted({entity_of(cluster, k) for k in placements}, key=str)
    if entities:
        # Valid by the validator, but not always a placement of the model: with preemption the
        # model only evicts for a preemptor placed on the victim's node (see .preemption).
        gone = entities[drop % len(entities)]
        less = {k: n for k, n in placements.items() if entity_of(cluster, k) != gone}
        cnt = counts_of(built, less, best.victims) if _valid(cluster, less, best.victims) else None
        if cnt is not None and model_accepts_placement(built, cnt):
            check_hint(built, cnt, f"exact optimum without {gone}")
            checked += 1
    return checked


# ---- random models --------------------------------------------------------------------------------
@st.composite
def mixed_snapshots(draw):
    """tests/strategies.py's small snapshots, some PodGroups annotated with a preferred zone."""
    objs = copy.deepcopy(draw(small_snapshots(max_nodes=5, max_groups=3, max_group_size=3)))
    for o in objs:
        if o["kind"] == "PodGroup" and draw(st.integers(0, 2)) == 0:
            o["metadata"].setdefault("annotations", {})[PREFERRED_ANNOTATION] = ZONE
    return objs


SETTINGS = settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@SETTINGS
@given(mixed_snapshots(), st.sampled_from(["default", "compact"]), st.booleans(), st.integers(0, 5))
def test_hints_agree_with_the_model_on_mixed_snapshots(objs, objective, preemption, drop):
    assert (
        check_model(
            load_objects(objs, source="<hypothesis>"),
            objective=objective,
            preemption=preemption,
            drop=drop,
        )
        >= 2
    )


@SETTINGS
@given(st.data(), st.integers(0, 5))
def test_hints_agree_with_the_model_with_preemption(data, drop):
    objs = small_preemption_snapshot(_DrawChooser(data.draw))
    assert check_model(load_objects(objs, source="<hypothesis>"), preemption=True, drop=drop) >= 2


@SETTINGS
@given(specs(max_nodes=4, max_pending=6), st.integers(0, 5))
def test_hints_agree_with_the_model_under_required_pod_affinity(spec, drop):
    assert check_model(load_objects(spec.objects(), source="<hypothesis>"), drop=drop) >= 2


@settings(
    max_examples=20,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(
    st.integers(4, 10),
    st.integers(1, 3),
    st.integers(1, 3),
    st.integers(1, 3),
    st.sampled_from(["gang", "basic"]),
)
def test_hints_agree_with_the_model_for_composites_with_topology(
    nodes, composites, groups, pods, policy
):
    cluster = to_cluster(
        scheduler_perf_composite(
            nodes=nodes,
            composites=composites,
            groups_per_composite=groups,
            pods_per_group=pods,
            policy=policy,
            topology=True,
        )
    )
    assert check_model(cluster, objective="compact") >= 2


@settings(
    max_examples=15,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(st.integers(0, 1000), st.sampled_from(["mixed", "busy"]))
def test_hints_agree_with_the_model_on_gpu_clusters(seed, profile):
    cluster = to_cluster(gpu_benchmark(8, 12, profile=profile, seed=seed))
    assert check_model(cluster, objective="compact", preemption=True) >= 2
