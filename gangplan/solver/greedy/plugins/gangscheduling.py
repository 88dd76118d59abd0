"""GangScheduling: ``pkg/scheduler/framework/plugins/gangscheduling/gangscheduling.go``
(kubernetes/kubernetes master, ``PlacementFeasible`` with ``framework.PlacementProgress``).

PlacementFeasible only (its PreEnqueue quorum check is the queue's gating in
:mod:`gangplan.models.groups`; its Permit wait has no counterpart in a batch run): Unschedulable
once ``minCount`` (``minGroupCount`` for a CompositePodGroup; 1 without a gang policy) is out of
reach, Wait while it is not yet met, Success once it is. Upstream runs PlacementFeasible only for
the plugin named GangScheduling ("Name has to be GangScheduling for the PlacementFeasible plugin
to be used"), so the profile's PlacementFeasible set is this plugin alone.
"""

from __future__ import annotations

from gangplan.solver.greedy.framework import Code, PlacementProgress
from gangplan.solver.greedy.plugins import names
from gangplan.solver.greedy.plugins.base import Plugin

NAME = names.GANG_SCHEDULING


def placement_feasible(remaining: int, scheduled: int, minimum: int) -> Code:
    """GangScheduling's PlacementFeasible decision.

    >>> [placement_feasible(1, 0, 2).label, placement_feasible(2, 0, 2).label, placement_feasible(0, 2, 2).label]
    ['Unschedulable', 'Wait', 'Success']
    """
    if remaining + scheduled < minimum:
        return Code.UNSCHEDULABLE
    if scheduled < minimum:
        return Code.WAIT
    return Code.SUCCESS


class GangScheduling(Plugin):
    name = NAME

    def placement_feasible(self, minimum: int, progress: PlacementProgress) -> Code:
        return placement_feasible(progress.remaining, progress.scheduled, minimum)
