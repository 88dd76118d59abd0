"""One diff of a snapshot (:func:`diff_snapshot`: both engines, or the Results given, the
classification and the decisive step) and its record :class:`Diff`, whose attributes mirror the
diff JSON."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from gangplan.models import defaults as D
from gangplan.models.cluster import Cluster
from gangplan.models.documents import (
    Admission,
    DecisiveStep,
    DiffDocument,
    Engines,
    GroupDiff,
    OptimalProof,
    SinglePodDiff,
)
from gangplan.models.result import Result
from gangplan.models.trace import check_trace_level
from gangplan.solver.diff.classification import (
    GREEDY_SUBOPTIMAL,
    GREEDY_SUBOPTIMAL_SOMETIMES,
    MODEL_MISMATCH,
    UNPROVEN,
    classify,
    group_differs,
    sometimes,
)
from gangplan.solver.diff.decisive import Progress, closest_optimum, search_decisive_step
from gangplan.solver.diff.evidence import admission, engine_side, side_stub, single_pods
from gangplan.solver.diff.proof import optimal_proof
from gangplan.solver.greedy import Samples, sample_greedy
from gangplan.solver.validate import validate

FRAME_COLUMNS = ("group", "priority", "min_count", "greedy_admitted", "optimal_admitted", "greedy_placed", "optimal_placed",
                 "greedy_domain", "optimal_domain", "greedy_reason", "optimal_reason", "differs")
"""The columns of :meth:`Diff.to_frame` (fields of :class:`~gangplan.models.documents.GroupDiff`)."""


EXIT_CODES = {MODEL_MISMATCH: 4, GREEDY_SUBOPTIMAL: 3, GREEDY_SUBOPTIMAL_SOMETIMES: 3, UNPROVEN: 5}
"""``gangplan diff``'s exit code per classification; 0 for the others (greedy proven to match)."""


@dataclass
class Diff:
    snapshot: str
    classification: str
    groups: list[GroupDiff]
    greedy_objective: dict[str, float]
    optimal_objective: dict[str, float]
    optimal_status: str
    gap: float | None
    problems: list[str]
    decisive: DecisiveStep | None
    greedy: Result
    optimal: Result
    seconds: float
    single_pods: list[SinglePodDiff] | None = None
    admission: Admission | None = None
    engines: Engines | None = None
    samples: Samples | None = None
    violations: dict[str, list] = field(default_factory=dict, repr=False)
    """The validator's findings for the two Results this Diff holds (``"greedy"``, ``"optimal"``),
    computed once by :func:`diff_snapshot`; not part of the JSON (``problems`` says them)."""
    proof: OptimalProof | None = None
    """What the exact engine proved, per tier, of the exact run the classification read
    (``optimalProof`` of the JSON): a verdict that greedy matches the optimum needs
    ``proof.proven``; otherwise the classification is ``unproven``."""

    def __repr__(self) -> str:
        g, o = self.greedy.admitted_groups(), self.optimal.admitted_groups()
        n = len(self.groups)
        step = ""
        if self.decisive is not None:
            step = f"; decisive step {'#' + str(self.decisive.step) + ' ' if self.decisive.step else ''}({self.decisive.kind})"
        return (f"<Diff {self.classification}: greedy {len(g)}/{n} groups admitted, {len(self.greedy.placements())} pods placed, "
                f"{len(self.greedy.victims)} victims; optimal {len(o)}/{n}, {len(self.optimal.placements())} pods, "
                f"{len(self.optimal.victims)} victims{step}>")

    @property
    def kube_version(self) -> str | None:
        """The kube-scheduler version greedy reproduced (``kubeVersion`` of the diff JSON)."""
        return self.greedy.options.kube_version

    @property
    def warnings(self) -> list[str]:
        """Snapshot inputs gangplan does not model (``warnings`` of the diff JSON)."""
        return list(self.greedy.warnings)

    def to_frame(self) -> Any:
        """A pandas DataFrame, one row per PodGroup with pending pods: ``group``, ``priority``,
        ``min_count``, then greedy against the optimum (``*_admitted``, ``*_placed``,
        ``*_domain``, ``*_reason``) and ``differs``."""
        import pandas as pd

        return pd.DataFrame([{c: getattr(g, c) for c in FRAME_COLUMNS} for g in self.groups], columns=list(FRAME_COLUMNS))

    @property
    def exit_code(self) -> int:
        return EXIT_CODES.get(self.classification, 0)

    def document(self, *, with_results: bool = True) -> DiffDocument:
        return DiffDocument(
            snapshot=self.snapshot,
            classification=self.classification,  # type: ignore[arg-type]
            optimal_status=self.optimal_status,
            gap=self.gap,
            seconds=round(self.seconds, 3),
            greedy_objective=self.greedy_objective,
            optimal_objective=self.optimal_objective,
            problems=self.problems,
            groups=self.groups,
            single_pods=self.single_pods or [],
            admission=self.admission or Admission(),
            engines=self.engines or Engines(greedy=side_stub(self.greedy), optimal=side_stub(self.optimal)),
            decisive=self.decisive,
            warnings=self.warnings,
            kube_version=self.kube_version,
            samples=self.samples.document() if self.samples is not None else None,
            optimal_proof=self.proof,
            greedy=self.greedy if with_results else None,
            optimal=self.optimal if with_results else None,
        )

    def to_dict(self, *, with_results: bool = True, trace: str | None = None) -> dict[str, Any]:
        """The ``diff --json`` document (camelCase; ``gangplan schema diff``), its Results'
        traces at ``trace`` (``none``, ``summary`` or ``full``; None: full)."""
        level = check_trace_level(trace)
        data = self.document(with_results=with_results).dump(exclude_none=False, exclude={"greedy", "optimal"} if not with_results else None,
                                                              context={"trace": level})
        if level == "none":
            for side in ("greedy", "optimal"):
                if isinstance(data.get(side), dict):
                    data[side]["trace"] = {}
        return data


def diff_snapshot(cluster: Cluster, *, snapshot: str = "", time_limit: float = D.TIME_LIMIT, wall_limit: float | None = None, probe_time_limit: float = D.PROBE_TIME_LIMIT, workers: int = D.WORKERS, seed: int = D.SEED, tie_break: str = D.TIE_BREAK, explain: bool = True, preemption: bool | None = None, progress: Progress | None = None, kube_version: str | None = None, samples: int = 0,
                  greedy: Result | None = None, optimal: Result | None = None) -> Diff:
    """Run both engines on ``cluster`` and compare them (``preemption``: both may evict;
    ``None``: as the profile; ``kube_version``: the kube-scheduler version greedy reproduces,
    default the cluster's).

    ``greedy`` / ``optimal``: Results already computed on ``cluster`` (``solve_greedy``,
    ``solve_exact``) to compare instead of running that engine again; the caller keeps them
    consistent with the options (:func:`gangplan.diff` checks that). The decisive step's probes
    and ``samples`` still run.

    ``samples`` K > 0 also runs greedy with seeds ``seed .. seed + K - 1`` and random ties
    (:mod:`gangplan.solver.greedy.samples`) and counts how often it admits each group and reaches
    the optimum; when some of those runs reach it and some do not (or the main run and the
    samples disagree), the classification is ``greedy-suboptimal-sometimes``.

    ``time_limit`` / ``probe_time_limit``: the exact engine's work limits (units of
    deterministic work, :func:`gangplan.solver.exact.solve_exact`), ``wall_limit`` its wall-clock
    cap (None: the default). ``progress`` (optional) is called with a short description before
    each long step."""
    from gangplan.solver.exact import check_feasible, solve_exact
    from gangplan.solver.greedy import solve_greedy

    cluster = cluster.at_version(kube_version)
    t0 = time.perf_counter()
    if greedy is not None and greedy.engine != "greedy":
        raise ValueError(f"greedy= takes a greedy Result, not a {greedy.engine} one")
    if optimal is not None and optimal.engine != "exact":
        raise ValueError(f"optimal= takes an exact Result, not a {optimal.engine} one")
    if greedy is None:
        if progress:
            progress("greedy: kube-scheduler's cycle")
        greedy = solve_greedy(cluster, tie_break=tie_break, seed=seed, snapshot=snapshot, preemption=preemption)
    if optimal is None:
        if progress:
            progress("exact: CP-SAT, tier by tier")
        optimal = solve_exact(cluster, time_limit=time_limit, wall_limit=wall_limit, workers=workers, seed=seed, hint=greedy, snapshot=snapshot, preemption=preemption)
    if progress:
        progress("checking the greedy placement in the exact model")
    feasible = check_feasible(cluster, greedy.placements(), greedy.victims)
    feasible_ok = feasible is True or (isinstance(feasible, list) and not feasible)
    violations = {"greedy": validate(cluster, greedy), "optimal": validate(cluster, optimal)}
    proof = optimal_proof(greedy, optimal)
    classification, problems = classify(cluster, greedy, optimal, greedy_feasible_in_model=feasible_ok,
                                        violations=(violations["greedy"], violations["optimal"]), proof=proof)
    if isinstance(feasible, list) and feasible:
        problems += [f"exact model rejects the greedy placement: {p}" for p in feasible]
    decisive = None
    if explain and classification == GREEDY_SUBOPTIMAL:
        decisive, agreeing = search_decisive_step(cluster, greedy, optimal, time_limit=probe_time_limit, workers=workers, seed=seed, preemption=preemption, progress=progress)
        found = validate(cluster, agreeing) if agreeing is not optimal else []
        broken = [f"exact (decisive-step probe): {v}" for v in found]
        if broken:  # the exact engine produced an invalid placement: a bug, like any other mismatch
            classification, problems = MODEL_MISMATCH, problems + broken
        else:
            closest = closest_optimum(cluster, optimal, agreeing, decisive, violations=found)
            if closest is not optimal:  # a copy of agreeing: its placements and victims, validated above
                violations["optimal"] = found
            optimal = closest
    groups = []
    for key in sorted(set(greedy.groups) | set(optimal.groups)):
        g, o = greedy.groups.get(key), optimal.groups.get(key)
        ref = g or o
        groups.append(
            GroupDiff(
                group=key,
                min_count=ref.min_count,
                greedy_admitted=bool(g and g.admitted),
                optimal_admitted=bool(o and o.admitted),
                greedy_placed=g.placed if g else 0,
                optimal_placed=o.placed if o else 0,
                greedy_domain=g.domain if g else None,
                optimal_domain=o.domain if o else None,
                greedy_reason=g.reason if g else None,
                optimal_reason=o.reason if o else None,
                priority=ref.priority,
                differs=group_differs(g, o),
            )
        )
    drawn = None
    if samples:
        if progress:
            progress(f"greedy: {samples} seeded runs (random ties and pod orders)")
        drawn = sample_greedy(cluster, samples, seed=seed, preemption=preemption, target=optimal.objective, snapshot=snapshot)
        classification = sometimes(classification, drawn)
    return Diff(
        samples=drawn,
        snapshot=snapshot,
        classification=classification,
        groups=groups,
        greedy_objective=greedy.objective,
        optimal_objective=optimal.objective,
        optimal_status=optimal.status.value,
        gap=optimal.gap,
        problems=problems,
        decisive=decisive,
        greedy=greedy,
        optimal=optimal,
        seconds=time.perf_counter() - t0,
        single_pods=single_pods(cluster, greedy, optimal),
        admission=admission(cluster, greedy, optimal),
        engines=Engines(greedy=engine_side(cluster, greedy), optimal=engine_side(cluster, optimal)),
        violations=violations,
        proof=proof,
    )
