"""One diff of a snapshot (:func:`diff_snapshot`: both engines, or the Results given, the
classification and the decisive step) and its record :class:`Diff`, whose attributes mirror the
diff JSON."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from gangplan.gcpause import gc_frozen
from gangplan.models import defaults as D
from gangplan.models.cluster import Cluster
from gangplan.models.documents import (
    DiffDocument,
    Engines,
    GroupDiff,
)
from gangplan.models.objective import snapshot_victims
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
from gangplan.solver.diff.evidence import admission, engine_side, single_pods
from gangplan.solver.diff.proof import optimal_proof
from gangplan.solver.greedy import Samples, sample_greedy
from gangplan.solver.kueue.compare import compare as compare_admission
from gangplan.solver.validate import validate

FRAME_COLUMNS = (
    "group",
    "priority",
    "min_count",
    "greedy_admitted",
    "optimal_admitted",
    "greedy_placed",
    "optimal_placed",
    "greedy_domain",
    "optimal_domain",
    "greedy_reason",
    "optimal_reason",
    "differs",
)
"""The columns of :meth:`Diff.to_frame` (fields of :class:`~gangplan.models.documents.GroupDiff`)."""


EXIT_CODES = {MODEL_MISMATCH: 4, GREEDY_SUBOPTIMAL: 3, GREEDY_SUBOPTIMAL_SOMETIMES: 3, UNPROVEN: 5}
"""``gangplan diff``'s exit code per classification; 0 for the others (greedy proven to match)."""


def _document_field(name: str, text: str) -> property:
    """An attribute of :class:`Diff` that is the field ``name`` of its document (read and set)."""
    return property(
        lambda self: getattr(self.doc, name),
        lambda self, value: setattr(self.doc, name, value),
        doc=text,
    )


@dataclass
class Diff:
    """One diff: its ``diff --json`` document (:attr:`doc`, a
    :class:`~gangplan.models.documents.DiffDocument` holding both Results), built once by
    :func:`diff_snapshot`, and what only the Python face holds besides it. Every field of the
    document is an attribute of the Diff as well (``d.classification``, ``d.groups``, ...;
    ``d.proof`` is ``optimalProof``), so the JSON is the document dumped, never assembled again."""

    doc: DiffDocument
    """The ``diff --json`` document, with the two Results (``greedy``, ``optimal``)."""
    seconds: float
    """Wall time of the diff, unrounded (the document holds it to the millisecond)."""
    samples: Samples | None = None
    """The sampled greedy runs themselves (``--samples K``; the document holds their counts)."""
    violations: dict[str, list] = field(default_factory=dict, repr=False)
    """The validator's findings for the two Results this Diff holds (``"greedy"``, ``"optimal"``),
    computed once by :func:`diff_snapshot`; not part of the JSON (``problems`` says them)."""

    snapshot = _document_field("snapshot", "The snapshot's name, as given.")
    classification = _document_field("classification", "The verdict (:mod:`gangplan.solver.diff`).")
    groups = _document_field("groups", "One :class:`GroupDiff` per PodGroup with pending pods.")
    greedy_objective = _document_field("greedy_objective", "Greedy's objective, tier by tier.")
    optimal_objective = _document_field(
        "optimal_objective", "The optimum's objective, tier by tier."
    )
    optimal_status = _document_field("optimal_status", "The exact engine's status.")
    gap = _document_field("gap", "The exact engine's relative gap, when it reports one.")
    problems = _document_field("problems", "What makes the diff a model mismatch.")
    decisive = _document_field(
        "decisive", "The decisive greedy step (:class:`DecisiveStep`), when greedy is suboptimal."
    )
    greedy = _document_field("greedy", "The greedy Result.")
    optimal = _document_field("optimal", "The exact Result the diff reports.")
    single_pods = _document_field(
        "single_pods", "One :class:`SinglePodDiff` per pending pod outside any group."
    )
    admission = _document_field("admission", "Admission counts per engine (:class:`Admission`).")
    kueue = _document_field(
        "kueue", "Kueue's admission against the optimum's (:class:`KueueDiff`), None without Kueue."
    )
    engines = _document_field(
        "engines", "Each engine's capacity use and victims (:class:`Engines`)."
    )
    proof = _document_field(
        "optimal_proof",
        """What the exact engine proved, per tier, of the exact run the classification read
    (``optimalProof`` of the JSON): a verdict that greedy matches the optimum needs
    ``proof.proven``; otherwise the classification is ``unproven``.""",
    )
    kube_version = _document_field(
        "kube_version",
        "The kube-scheduler version greedy reproduced (``kubeVersion`` of the diff JSON).",
    )
    warnings = _document_field(
        "warnings", "Snapshot inputs gangplan does not model (``warnings`` of the diff JSON)."
    )

    def __repr__(self) -> str:
        g, o = self.greedy.admitted_groups(), self.optimal.admitted_groups()
        n = len(self.groups)
        step = ""
        if self.decisive is not None:
            step = f"; decisive step {'#' + str(self.decisive.step) + ' ' if self.decisive.step else ''}({self.decisive.kind})"
        return (
            f"<Diff {self.classification}: greedy {len(g)}/{n} groups admitted, {len(self.greedy.placements())} pods placed, "
            f"{len(self.greedy.victims)} victims; optimal {len(o)}/{n}, {len(self.optimal.placements())} pods, "
            f"{len(self.optimal.victims)} victims{step}>"
        )

    def to_frame(self) -> Any:
        """A pandas DataFrame, one row per PodGroup with pending pods: ``group``, ``priority``,
        ``min_count``, then greedy against the optimum (``*_admitted``, ``*_placed``,
        ``*_domain``, ``*_reason``) and ``differs``."""
        import pandas as pd

        return pd.DataFrame(
            [{c: getattr(g, c) for c in FRAME_COLUMNS} for g in self.groups],
            columns=list(FRAME_COLUMNS),
        )

    @property
    def exit_code(self) -> int:
        return EXIT_CODES.get(self.classification, 0)

    def document(self, *, with_results: bool = True) -> DiffDocument:
        """The ``diff --json`` document: :attr:`doc` itself, or a copy without the two Results."""
        return (
            self.doc
            if with_results
            else self.doc.model_copy(update={"greedy": None, "optimal": None})
        )

    def to_dict(self, *, with_results: bool = True, trace: str | None = None) -> dict[str, Any]:
        """The ``diff --json`` document (camelCase; ``gangplan schema diff``), its Results'
        traces at ``trace`` (``none``, ``summary`` or ``full``; None: full)."""
        level = check_trace_level(trace)
        data = self.doc.dump(
            exclude_none=False,
            exclude=None if with_results else {"greedy", "optimal"},
            context={"trace": level},
        )
        if level == "none":
            for side in ("greedy", "optimal"):
                if isinstance(data.get(side), dict):
                    data[side]["trace"] = {}
        return data


def group_diffs(greedy: Result, optimal: Result) -> list[GroupDiff]:
    """One :class:`GroupDiff` per PodGroup either Result has, by key."""
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
    return groups


def _run_engines(
    cluster: Cluster,
    greedy: Result | None,
    optimal: Result | None,
    *,
    snapshot: str,
    time_limit: float,
    wall_limit: float | None,
    workers: int,
    seed: int,
    tie_break: str,
    preemption: bool | None,
    progress: Progress | None,
) -> tuple[Result, Result]:
    """The two Results: those given (checked to be of the right engine), the others computed."""
    from gangplan.solver.exact import solve_exact
    from gangplan.solver.greedy import solve_greedy

    if greedy is not None and greedy.engine != "greedy":
        raise ValueError(f"greedy= takes a greedy Result, not a {greedy.engine} one")
    if optimal is not None and optimal.engine != "exact":
        raise ValueError(f"optimal= takes an exact Result, not a {optimal.engine} one")
    if greedy is None:
        if progress:
            progress("greedy: kube-scheduler's cycle")
        greedy = solve_greedy(
            cluster, tie_break=tie_break, seed=seed, snapshot=snapshot, preemption=preemption
        )
    if optimal is None:
        if progress:
            progress("exact: CP-SAT, tier by tier")
        optimal = solve_exact(
            cluster,
            time_limit=time_limit,
            wall_limit=wall_limit,
            workers=workers,
            seed=seed,
            hint=greedy,
            snapshot=snapshot,
            preemption=preemption,
        )
    return greedy, optimal


def greedy_in_model(cluster: Cluster, greedy: Result, optimal: Result) -> bool | list[str]:
    """Does the exact model accept greedy's placement (:func:`~gangplan.solver.exact.check_feasible`:
    True, or the rule families that reject it)? On a large model the exact run kept
    (:mod:`gangplan.solver.exact.kept`) it is asked first, without building the model again
    (10,000 nodes: 3-5 s); only its True is taken, anything else goes to ``check_feasible``."""
    from gangplan.solver.exact import check_feasible
    from gangplan.solver.exact.kept import accepts, take

    kept = take(optimal, cluster)
    if kept is not None and not greedy.victims and accepts(kept, greedy.placements()):
        return True
    # a pending pod greedy placed and evicted (rule V) is, in the model, a pod not placed
    gone = [p.key for p in snapshot_victims(cluster, greedy.victims)]
    return check_feasible(cluster, greedy.placements(), gone)


def _explained(
    cluster: Cluster,
    greedy: Result,
    optimal: Result,
    violations: dict[str, list],
    *,
    time_limit: float,
    workers: int,
    seed: int,
    preemption: bool | None,
    progress: Progress | None,
) -> tuple[Any, Result, list[str]]:
    """The decisive step, the optimum the diff reports (:func:`closest_optimum`; ``violations``
    updated when it is not ``optimal``) and the validator's findings on the probe's optimum
    (non-empty: a model mismatch, ``optimal`` kept)."""
    decisive, agreeing = search_decisive_step(
        cluster,
        greedy,
        optimal,
        time_limit=time_limit,
        workers=workers,
        seed=seed,
        preemption=preemption,
        progress=progress,
    )
    found = validate(cluster, agreeing) if agreeing is not optimal else []
    broken = [f"exact (decisive-step probe): {v}" for v in found]
    if broken:
        return decisive, optimal, broken
    closest = closest_optimum(cluster, optimal, agreeing, decisive, violations=found)
    if closest is not optimal:  # a copy of agreeing: its placements and victims, validated above
        violations["optimal"] = found
    return decisive, closest, []


def diff_snapshot(
    cluster: Cluster,
    *,
    snapshot: str = "",
    time_limit: float = D.TIME_LIMIT,
    wall_limit: float | None = None,
    probe_time_limit: float = D.PROBE_TIME_LIMIT,
    workers: int = D.WORKERS,
    seed: int = D.SEED,
    tie_break: str = D.TIE_BREAK,
    explain: bool = True,
    preemption: bool | None = None,
    progress: Progress | None = None,
    kube_version: str | None = None,
    samples: int = 0,
    greedy: Result | None = None,
    optimal: Result | None = None,
) -> Diff:
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
    with gc_frozen():  # the snapshot lives through the whole diff (gangplan.gcpause)
        return _diff(
            cluster.at_version(kube_version),
            snapshot=snapshot,
            time_limit=time_limit,
            wall_limit=wall_limit,
            probe_time_limit=probe_time_limit,
            workers=workers,
            seed=seed,
            tie_break=tie_break,
            explain=explain,
            preemption=preemption,
            progress=progress,
            samples=samples,
            greedy=greedy,
            optimal=optimal,
        )


def _diff(
    cluster: Cluster,
    *,
    snapshot: str,
    time_limit: float,
    wall_limit: float | None,
    probe_time_limit: float,
    workers: int,
    seed: int,
    tie_break: str,
    explain: bool,
    preemption: bool | None,
    progress: Progress | None,
    samples: int,
    greedy: Result | None,
    optimal: Result | None,
) -> Diff:
    t0 = time.perf_counter()
    greedy, optimal = _run_engines(
        cluster,
        greedy,
        optimal,
        snapshot=snapshot,
        time_limit=time_limit,
        wall_limit=wall_limit,
        workers=workers,
        seed=seed,
        tie_break=tie_break,
        preemption=preemption,
        progress=progress,
    )
    if progress:
        progress("checking the greedy placement in the exact model")
    feasible = greedy_in_model(cluster, greedy, optimal)
    feasible_ok = feasible is True or (isinstance(feasible, list) and not feasible)
    violations = {"greedy": validate(cluster, greedy), "optimal": validate(cluster, optimal)}
    proof = optimal_proof(greedy, optimal)
    classification, problems = classify(
        cluster,
        greedy,
        optimal,
        greedy_feasible_in_model=feasible_ok,
        violations=(violations["greedy"], violations["optimal"]),
        proof=proof,
    )
    if isinstance(feasible, list) and feasible and proof.stopped_by != "restricted-model":
        problems += [f"exact model rejects the greedy placement: {p}" for p in feasible]
    decisive = None
    kueue = compare_admission(greedy, optimal)
    kueue_decided = kueue is not None and (kueue.only_optimal or kueue.other_flavor)
    # Kueue decided what kube-scheduler then saw (which jobs, which flavors and domains): the
    # decisive step is Kueue's (``kueue.decisive``); kube-scheduler's probes would only find
    # that a pod could not go where Kueue's admission did not send it.
    if explain and classification == GREEDY_SUBOPTIMAL and not kueue_decided:
        decisive, optimal, broken = _explained(
            cluster,
            greedy,
            optimal,
            violations,
            time_limit=probe_time_limit,
            workers=workers,
            seed=seed,
            preemption=preemption,
            progress=progress,
        )
        if broken:  # the exact engine produced an invalid placement: a bug, like any mismatch
            classification, problems = MODEL_MISMATCH, problems + broken
    groups = group_diffs(greedy, optimal)
    drawn = None
    if samples:
        if progress:
            progress(f"greedy: {samples} seeded runs (random ties and pod orders)")
        drawn = sample_greedy(
            cluster,
            samples,
            seed=seed,
            preemption=preemption,
            target=optimal.objective,
            snapshot=snapshot,
        )
        classification = sometimes(classification, drawn)
    seconds = time.perf_counter() - t0
    doc = DiffDocument(
        snapshot=snapshot,
        classification=classification,  # type: ignore[arg-type]
        optimal_status=optimal.status.value,
        gap=optimal.gap,
        seconds=round(seconds, 3),
        greedy_objective=greedy.objective,
        optimal_objective=optimal.objective,
        problems=problems,
        groups=groups,
        single_pods=single_pods(cluster, greedy, optimal),
        admission=admission(cluster, greedy, optimal),
        engines=Engines(greedy=engine_side(cluster, greedy), optimal=engine_side(cluster, optimal)),
        decisive=decisive,
        warnings=list(greedy.warnings),
        kube_version=greedy.options.kube_version,
        samples=drawn.document() if drawn is not None else None,
        optimal_proof=proof,
        greedy=greedy,
        optimal=optimal,
        kueue=kueue,
    )
    return Diff(doc=doc, seconds=seconds, samples=drawn, violations=violations)
