"""The framework's placement runners: PlacementGenerate (several plugins merged) and
PlacementScore, as ``RunPlacementGeneratePlugins`` / ``RunPlacementScorePlugins`` of
``pkg/scheduler/framework/runtime/framework.go`` run them (kubernetes/kubernetes master; the
merge as ``placement_merging_test.go`` and ``tas_multi_placement_test.go`` pin it down).

PlacementGenerate: every plugin of the profile generates inside the same parent placement. A
plugin returning exactly the parent does not constrain the group and is skipped; when none
constrains it the group has no placement decision (its one placement is the parent). A single
constraining plugin's placements are used unchanged. Several are folded in plugin order: every
combination of one placement per plugin, their node sets intersected, empty intersections
dropped, names joined with "/" ("a1/b1"; "" and names holding "/" are joined as they are). No
placement left: Unschedulable. A plugin's non-success status ends generation with it.

PlacementFeasible: after each pod (child group) of an evaluation every plugin judges the
progress; Unschedulable wins over Wait, Wait over Success.

PlacementScore: every plugin scores all feasible placements of the decision
(``ScorePlacement``), its NormalizePlacementScore runs over them if it has one, the scores are
multiplied by the plugin's ``placementScore`` weight and summed. The in-tree plugins are
:mod:`.plugins.topologyaware`, :mod:`.plugins.noderesources.placement_bin_packing` and
:mod:`.plugins.podgrouppodscount`; the algorithm that evaluates placements is
:mod:`.placement_cycle`.
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import product

import numpy as np

from gangplan.models.objects import Pod
from gangplan.solver.greedy.framework import (
    SUCCESS,
    Code,
    Placement,
    PlacementError,
    PlacementProgress,
    PodGroupInfo,
    Status,
    unschedulable,
)
from gangplan.solver.greedy.plugins.base import NORMALIZE_PLACEMENT_SCORE, Plugin
from gangplan.solver.greedy.plugins.gangscheduling import GangScheduling, placement_feasible
from gangplan.solver.greedy.snapshot import NodeTable


def run_placement_generate(
    generators: list[Plugin], snap: NodeTable, info: PodGroupInfo, parent: Placement
) -> tuple[list[Placement] | None, Status]:
    """The placements of ``info``'s group inside ``parent``: (None, Success) when no plugin
    constrains the group, else the merged placements (possibly none, with Unschedulable) or a
    plugin's failing status."""
    constraining: list[tuple[Plugin, list[Placement]]] = []
    for pl in generators:
        got, st = pl.generate_placements(snap, info, parent)
        if not st.ok:
            return [], st.with_plugin(pl.name)
        if len(got) == 1 and got[0] is parent:
            continue
        if not got:
            return [], Status(
                Code.UNSCHEDULABLE, (f"plugin {pl.name} generated no placement",), pl.name
            )
        constraining.append((pl, got))
    if not constraining:
        return None, SUCCESS
    if len(constraining) == 1:
        return constraining[0][1], SUCCESS
    merged = merge_placements([got for _, got in constraining])
    if not merged:
        plugins = " ".join(pl.name for pl, _ in constraining)
        return [], unschedulable(f"no placements of plugins [{plugins}] share a node")
    return merged, SUCCESS


def merge_placements(per_plugin: list[list[Placement]]) -> list[Placement]:
    """Every combination of one placement per plugin (first plugin outermost), intersected;
    empty intersections dropped.

    >>> a = [Placement("a1", np.array([0, 1])), Placement("a2", np.array([2, 3]))]
    >>> b = [Placement("b1", np.array([1, 2]))]
    >>> [(p.name, p.nodes.tolist()) for p in merge_placements([a, b])]
    [('a1/b1', [1]), ('a2/b1', [2])]
    """
    out = []
    for combo in product(*per_plugin):
        nodes = combo[0].nodes
        for p in combo[1:]:
            nodes = np.intersect1d(nodes, p.nodes, assume_unique=True)
            if not len(nodes):
                break
        if len(nodes):
            parts = tuple(q for p in combo for q in (p.parts or (p,)))
            out.append(Placement("/".join(p.name for p in combo), nodes, parts=parts))
    return out


def run_placement_score(
    scorers: list[tuple[Plugin, int]],
    snap: NodeTable,
    info: PodGroupInfo,
    placements: list[Placement],
    proposals: list[list[tuple[Pod, int]]],
) -> list[dict[str, int]]:
    """Per placement its weighted score of every PlacementScore plugin, in profile order.
    Raises :class:`PlacementError` (an Error status of a plugin)."""
    scores: list[dict[str, int]] = [{} for _ in placements]
    for pl, weight in scorers:
        raw = list(pl.score_placements(snap, info, placements, proposals))
        if NORMALIZE_PLACEMENT_SCORE in pl.points:
            raw = list(pl.normalize_placement_scores(snap, info, raw))
        if len(raw) != len(placements):
            raise PlacementError(
                f"plugin {pl.name!r} scored {len(raw)} of {len(placements)} placements"
            )
        for k, v in enumerate(raw):
            scores[k][pl.name] = weight * int(v)
    return scores


def best_placement(totals: list[int], tie_break: str, rng, shift: int = 0) -> tuple[int, int]:
    """``findBestPlacement``'s choice among scored feasible placements: the index of the highest
    total and how many placements share it. Equal totals go to the earliest (generation order)
    with ``tie_break="first"`` (``shift`` places later, cyclically, on a v1.36 tie retry), to
    ``rng.randrange`` over them with ``"random"`` (upstream: ``Randomizer = rand.Int()``). One rule for the workload cycle
    (:meth:`.placement_cycle.PlacementAlgorithm._select`) and the replay's placer.

    >>> import random
    >>> best_placement([40, 70, 70], "first", random.Random(0))
    (1, 2)
    """
    best = max(totals)
    ties = [k for k, t in enumerate(totals) if t == best]
    if tie_break == "first" or len(ties) == 1:
        return ties[shift % len(ties)], len(ties)
    return ties[rng.randrange(len(ties))], len(ties)


def run_placement_feasible(
    plugins: list[Plugin], minimum: int, remaining: int, scheduled: int
) -> Code:
    """PlacementFeasible over the profile's plugins: Unschedulable if one says so, else Wait if
    one waits, else Success (an Unschedulable stops the evaluation at once)."""
    progress = PlacementProgress(scheduled=scheduled, remaining=remaining)
    code = Code.SUCCESS
    for pl in plugins:
        got = pl.placement_feasible(minimum, progress)
        if got == Code.UNSCHEDULABLE:
            return got
        if got == Code.WAIT:
            code = got
    return code


def feasible_rule(plugins: list[Plugin]) -> Callable[[int, int, int], Code]:
    """``(remaining, scheduled, minimum) -> Code`` for the pod-group loop: GangScheduling's rule
    itself when it is the only plugin (the profile's case; no per-pod objects), else
    :func:`run_placement_feasible` over ``plugins``."""
    if len(plugins) == 1 and type(plugins[0]) is GangScheduling:
        return placement_feasible
    return lambda remaining, scheduled, minimum: run_placement_feasible(
        plugins, minimum, remaining, scheduled
    )
