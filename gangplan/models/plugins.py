"""Which scheduler plugins gangplan models, and at which extension points: the snapshot layer's
view of the greedy engine's plugin registry, so the loader can name a KubeSchedulerConfiguration
plugin that no engine runs without importing an engine.

The extension point names mirror upstream's ``pkg/scheduler/framework/interface.go``
(kubernetes/kubernetes master). :data:`MODELLED` lists the in-tree plugins of
``gangplan.solver.greedy.plugins.REGISTRY`` with the points each implements (``tests/
test_rules_layer.py`` keeps the two equal); a plugin added with
``gangplan.solver.greedy.plugins.register`` is declared here too (:func:`declare`).

>>> sorted(MODELLED["NodeResourcesFit"])
['Filter', 'Score']
>>> placement_weights({"NodeResourcesFit": 1, "PodGroupPodsCount": 1, "PlacementBinPacking": 3})
{'PlacementBinPacking': 3, 'PodGroupPodsCount': 1}
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from gangplan.models.objects import PLACEMENT_PLUGIN_ALIASES, SchedulerProfile

PRE_FILTER = "PreFilter"
FILTER = "Filter"
PRE_SCORE = "PreScore"
SCORE = "Score"
NORMALIZE_SCORE = "NormalizeScore"
PLACEMENT_GENERATE = "PlacementGenerate"
PLACEMENT_SCORE = "PlacementScore"
NORMALIZE_PLACEMENT_SCORE = "NormalizePlacementScore"
PLACEMENT_FEASIBLE = "PlacementFeasible"
RESERVE = "Reserve"
DEFAULT_PREEMPTION = "DefaultPreemption"
"""The one PostFilter plugin gangplan models (``--preemption``)."""

MODELLED: dict[str, frozenset[str]] = {
    "NodeUnschedulable": frozenset({FILTER}),
    "NodeName": frozenset({FILTER}),
    "TaintToleration": frozenset({FILTER, SCORE, NORMALIZE_SCORE}),
    "NodeAffinity": frozenset({PRE_FILTER, FILTER, PRE_SCORE, SCORE, NORMALIZE_SCORE}),
    "NodePorts": frozenset({PRE_FILTER, FILTER}),
    "NodeResourcesFit": frozenset({FILTER, SCORE}),
    "PodTopologySpread": frozenset({PRE_FILTER, FILTER, PRE_SCORE, SCORE, NORMALIZE_SCORE}),
    "InterPodAffinity": frozenset({PRE_FILTER, FILTER, PRE_SCORE, SCORE, NORMALIZE_SCORE}),
    "DynamicResources": frozenset({PRE_FILTER, FILTER}),
    "NodeResourcesBalancedAllocation": frozenset({PRE_SCORE, SCORE}),
    "ImageLocality": frozenset({SCORE}),
    "GangScheduling": frozenset({PLACEMENT_FEASIBLE}),
    "TopologyPlacementGenerator": frozenset({PLACEMENT_GENERATE}),
    "PlacementBinPacking": frozenset({PLACEMENT_SCORE}),
    "PodGroupPodsCount": frozenset({PLACEMENT_SCORE, NORMALIZE_PLACEMENT_SCORE}),
}
"""Plugin name -> the extension points gangplan runs it at."""


def declare(name: str, points: Iterable[str]) -> None:
    """A plugin added outside the package (``register``) serves ``points``."""
    MODELLED[name] = frozenset(points)


def forget(name: str) -> None:
    """Undo :func:`declare` (``unregister``); an in-tree plugin stays."""
    MODELLED.pop(name, None)


def placement_weights(weights: dict[str, int]) -> dict[str, int]:
    """``placementScore`` weights by registered plugin name (aliases resolved, later wins)."""
    out: dict[str, int] = {}
    for name, w in weights.items():
        out[PLACEMENT_PLUGIN_ALIASES.get(name, name)] = w
    return out


def unmodelled_plugins(
    cfg: SchedulerProfile, known: Mapping[str, Iterable[str]] | None = None
) -> list[tuple[str, str]]:
    """(plugin set, name) of every plugin the configuration enables that gangplan cannot run
    there: no modelled plugin of that name, or one without that extension point. The greedy
    profile leaves them out; the loader names them in a warning. ``known``: the plugins of the
    registry the run will use, name -> points (default :data:`MODELLED`: the in-tree ones)."""
    modelled = MODELLED if known is None else known
    sets = [
        ("filter", FILTER, list(cfg.filter_plugins)),
        ("score", SCORE, [n for n, w in cfg.score_weights.items() if w > 0]),
        (
            "placementScore",
            PLACEMENT_SCORE,
            [n for n, w in placement_weights(cfg.placement_weights).items() if w > 0],
        ),
        (
            "placementGenerate",
            PLACEMENT_GENERATE,
            [PLACEMENT_PLUGIN_ALIASES.get(n, n) for n in cfg.placement_generate_plugins],
        ),
    ]
    out = [
        (where, n)
        for where, point, listed in sets
        for n in listed
        if point not in modelled.get(n, ())
    ]
    out += [("postFilter", n) for n in cfg.post_filter_plugins if n != DEFAULT_PREEMPTION]
    return out


__all__ = ["MODELLED", "declare", "forget", "placement_weights", "unmodelled_plugins"]
