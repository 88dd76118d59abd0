"""How often kube-scheduler admits each group, over the choices upstream makes at random.

kube-scheduler is random in two places a snapshot cannot pin: equal-score nodes (``selectHost``
takes one of the best nodes uniformly) and, in v1.36, the order of a gang's pods gated before the
quorum (a Go map, :mod:`.queue`). One greedy run draws both from its seed; :func:`sample_greedy`
runs ``K`` seeds (``seed .. seed + K - 1``, ties drawn at random) and counts, per root group and
per single pod, the runs that admit (place) it, and per run whether it reaches a target objective
(the optimum, in a diff). A count of K or 0 is what every drawn run did, not a proof; the counts
are the share of draws, each seed equally likely.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from gangplan.models.cluster import Cluster
from gangplan.models.documents import SamplesDocument
from gangplan.models.objective import admitted_entities, compare
from gangplan.models.result import Result

SAMPLE_TIE_BREAK = "random"


@dataclass
class Samples:
    runs: int
    first_seed: int
    kube_version: str
    admitted: dict[str, int]
    """Root group key -> runs that admit it (every pending root group, 0 included; admission as
    the objective counts it, :func:`gangplan.models.objective.admitted_entities`)."""
    placed: dict[str, int]
    """Pending single pod key -> runs that place it."""
    results: list[Result] = field(default_factory=list, repr=False)
    reaches_target: int | None = None
    """Runs whose objective is at least the target's on every tier both carry (None: no target)."""
    tie_break: str = SAMPLE_TIE_BREAK

    @property
    def seeds(self) -> list[int]:
        return [self.first_seed, self.first_seed + self.runs - 1]

    def document(self) -> SamplesDocument:
        return SamplesDocument(
            runs=self.runs,
            seeds=self.seeds,
            tie_break=self.tie_break,
            kube_version=self.kube_version,
            admitted=dict(self.admitted),
            placed=dict(self.placed),
            reaches_optimum=self.reaches_target,
        )


def sample_greedy(
    cluster: Cluster,
    samples: int,
    *,
    seed: int = 0,
    preemption: bool | None = None,
    kube_version: str | None = None,
    target: dict[str, float] | None = None,
    snapshot: str | None = None,
    tie_break: str = SAMPLE_TIE_BREAK,
) -> Samples:
    """``samples`` greedy runs, seeds ``seed .. seed + samples - 1``, random ties (module docstring).
    ``tie_break="first"`` keeps ties fixed, so only the pod orders vary (the brute-force property test)."""
    from gangplan.solver.greedy.engine import solve_greedy

    if samples < 1:
        raise ValueError("samples must be at least 1")
    cluster = cluster.at_version(kube_version)
    tree = cluster.groups
    entities = {tree.entity_of(p) for p in cluster.queued_pods}
    admitted: Counter[str] = Counter({e.key: 0 for e in entities if not e.is_pod})
    placed: Counter[str] = Counter({e.key: 0 for e in entities if e.is_pod})
    results: list[Result] = []
    reaches = 0
    for s in range(seed, seed + samples):
        r = solve_greedy(
            cluster, tie_break=tie_break, seed=s, top_k=0, preemption=preemption, snapshot=snapshot
        )
        results.append(r)
        for e in admitted_entities(cluster, r.placements(), r.victims) & entities:
            (placed if e.is_pod else admitted)[e.key] += 1
        if target is not None and compare(target, r.objective) <= 0:
            reaches += 1
    return Samples(
        samples,
        seed,
        cluster.kube_version.value,
        dict(sorted(admitted.items())),
        dict(sorted(placed.items())),
        results,
        reaches if target is not None else None,
        tie_break,
    )
