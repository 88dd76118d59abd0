"""PodGroupPodsCount: ``pkg/scheduler/framework/plugins/podgrouppodscount/podgroup_pods_count.go``
(kubernetes/kubernetes @78acd4d4, master).

PlacementScore with NormalizePlacementScore: the raw score of a placement is the group's
scheduled pods (summed over every PodGroup under a CompositePodGroup) plus the placement's
proposed assignments; normalised as ``raw * 100 // max raw`` (an Error when every raw score is 0:
"no pods from pod group are assigned to any of the candidate placements").
"""

from __future__ import annotations

from gangplan.solver.greedy.framework import MAX_NODE_SCORE, PlacementError
from gangplan.solver.greedy.plugins import names
from gangplan.solver.greedy.plugins.base import Plugin

NAME = names.POD_GROUP_PODS_COUNT


def pods_count_scores(raw: list[int]) -> list[int]:
    """NormalizePlacementScore: ``raw * 100 // max(raw)``.

    >>> pods_count_scores([3, 4, 2])
    [75, 100, 50]
    """
    top = max(raw, default=0)
    if top == 0:
        raise PlacementError(
            "no pods from pod group are assigned to any of the candidate placements"
        )
    return [v * MAX_NODE_SCORE // top for v in raw]


class PodGroupPodsCount(Plugin):
    name = NAME

    def score_placements(self, snap, info, placements, proposals):
        before = len(info.scheduled)
        return [before + len(assigned) for assigned in proposals]

    def normalize_placement_scores(self, snap, info, scores):
        return pods_count_scores(scores)
