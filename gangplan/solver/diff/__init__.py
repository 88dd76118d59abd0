"""Greedy against optimal on one snapshot: classification and the decisive greedy step.

Classification (``Diff.classification``):

``identical``           same placements and victims
``tie-break``           same objective, different nodes, and wherever they differ the optimum's node
                        was in the greedy's tie set for that pod (an arbitrary upstream choice)
``equivalent``          same objective, different nodes for other reasons
``greedy-suboptimal``   the optimum is lexicographically better on the shared objective tiers
``model-mismatch``      a result fails validation, the greedy placement is infeasible in the exact
                        model, or greedy beats a proven optimum: the engines disagree about the
                        rules, which is a bug
``unproven``            the best placement found is no better than greedy's, but a compared tier
                        is not proven (:mod:`.proof`): a better one may exist

``identical``, ``tie-break`` and ``equivalent`` claim that greedy does as well as any placement,
so they need every compared tier proven (``Diff.proof``); ``greedy-suboptimal`` needs no proof.

The decisive step is found, not guessed. The *candidates* are the greedy's pod choices, in
scheduling order, that survive in greedy's final result or belong to a group the optimum admits
(a single pod counts as its own group): a tentative choice of a group greedy reverted and the
optimum rejects left no trace and cannot be to blame. The candidates c1..cn are fixed in the
exact model one prefix at a time. ``P(k)`` = "an optimal placement exists that agrees with
c1..ck"; P(0) holds, and once P fails it keeps failing, so a binary search finds the first k
with P(k) false: ck is the earliest candidate no optimal placement shares. The optimum ``R``
found for P(k-1) agrees with every earlier candidate; if R puts ck's pod on another node the step
is a ``placement`` step, if R leaves it out the difference is which groups get admitted (an
``admission`` step). When every candidate is shared by an optimum (P(n) holds), the step is an
``admission`` step without a pod: greedy's choices were all right, the optimum admits more.

Layout: :mod:`.classification` (the classes and what differs), :mod:`.evidence` (per-group use,
admission counts, victims, the decisive step's why and preemption criterion), :mod:`.decisive`
(the binary search for the decisive step), :mod:`.run` (:func:`diff_snapshot` and :class:`Diff`).
"""

from gangplan.solver.diff.classification import (
    EQUIVALENT,
    GREEDY_SUBOPTIMAL,
    GREEDY_SUBOPTIMAL_SOMETIMES,
    IDENTICAL,
    MODEL_MISMATCH,
    TIE_BREAK,
    UNPROVEN,
    classify,
)
from gangplan.solver.diff.decisive import (
    Progress,
    candidate_choices,
    closest_optimum,
    find_decisive_step,
    greedy_choices,
    search_decisive_step,
)
from gangplan.solver.diff.evidence import admission, engine_side, group_use, single_pods
from gangplan.solver.diff.proof import optimal_proof
from gangplan.solver.diff.run import FRAME_COLUMNS, Diff, diff_snapshot

__all__ = [
    "EQUIVALENT",
    "FRAME_COLUMNS",
    "GREEDY_SUBOPTIMAL",
    "GREEDY_SUBOPTIMAL_SOMETIMES",
    "IDENTICAL",
    "MODEL_MISMATCH",
    "TIE_BREAK",
    "UNPROVEN",
    "Diff",
    "Progress",
    "admission",
    "candidate_choices",
    "classify",
    "closest_optimum",
    "diff_snapshot",
    "engine_side",
    "find_decisive_step",
    "greedy_choices",
    "group_use",
    "optimal_proof",
    "search_decisive_step",
    "single_pods",
]
