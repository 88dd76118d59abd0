"""KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1) -> SchedulerProfile.

Defaults and merge rules follow ``pkg/scheduler/apis/config/v1/default_plugins.go`` and
``defaults.go`` (v1.35): the profile starts from the default plugins; a plugin set's ``disabled``
list removes defaults (``*`` removes all of that set); ``enabled`` adds plugins (after the
defaults, in the order written) or overrides a default's weight. ``multiPoint`` applies to the
filter and score sets and ``placementGenerate``; ``placementScore`` (weights) and
``placementGenerate`` (no weights) are sets of their own, in which the v1.36 documentation's names
NodeResourcesFit and TopologyPlacement stand for PlacementBinPacking and
TopologyPlacementGenerator (``PLACEMENT_PLUGIN_ALIASES``). Names are kept as written; the greedy
profile uses those a registered plugin carries. Only the first profile is read (gangplan
simulates one scheduler).

Numbers are validated as kube-scheduler does before it starts (``pkg/scheduler/apis/config/
validation/validation.go`` and ``validation_pluginargs.go``, v1.35; types from
``k8s.io/kube-scheduler/config/v1``): ``percentageOfNodesToScore`` (int32) 0..100; a plugin weight is
an int32 (0 means the default; the int32 bound also keeps the framework's check that the weighted
total of 100-point scores fits an int64); ``NodeResourcesFit`` scoring-strategy resource weights
(int64) 1..100 and ``NodeResourcesBalancedAllocation`` ones exactly 1, 0 or unset meaning 1 (v1
defaults); ``requestedToCapacityRatio.shape`` points (int32) utilization 0..100, score 0..10
(``MaxCustomPriorityScore``), utilization strictly increasing.
"""

from __future__ import annotations

from gangplan.io.fields import Ctx
from gangplan.models.objects import (
    DEFAULT_FILTER_PLUGINS,
    DEFAULT_PLACEMENT_GENERATE_PLUGINS,
    DEFAULT_PLACEMENT_WEIGHTS,
    DEFAULT_POST_FILTER_PLUGINS,
    DEFAULT_SCORE_WEIGHTS,
    PLACEMENT_PLUGIN_ALIASES,
    SchedulerProfile,
    UtilizationShapePoint,
)


def _apply_set(
    ctx: Ctx,
    plugins: dict,
    set_name: str,
    weights: dict[str, int],
    defaults: dict[str, int],
    field: str,
    aliases: dict[str, str] | None = None,
) -> None:
    block = ctx.map(plugins.get(set_name), f"{field}.{set_name}")
    rename = aliases or {}
    for f, d in ctx.maps(block.get("disabled"), f"{field}.{set_name}.disabled"):
        name = ctx.str(d.get("name"), f + ".name", required=True)
        name = rename.get(name, name)
        if name == "*":
            for k in list(weights):
                if k in defaults:
                    del weights[k]
        else:
            weights.pop(name, None)
    for f, e in ctx.maps(block.get("enabled"), f"{field}.{set_name}.enabled"):
        name = ctx.str(e.get("name"), f + ".name", required=True)
        name = rename.get(name, name)
        w = ctx.int32(e.get("weight"), f + ".weight", minimum=0)
        weights[name] = w if w > 0 else defaults.get(name, 1)


def _resource_weights(ctx: Ctx, raw: object, field: str, maximum: int) -> dict[str, int]:
    """``[{name, weight}]`` (config.ResourceSpec) with the v1 default: weight 0 or unset is 1."""
    out = {}
    for rf, r in ctx.maps(raw, field):
        weight = ctx.int(r.get("weight"), rf + ".weight", minimum=0) or 1
        out[ctx.str(r.get("name"), rf + ".name", required=True)] = ctx.int(
            weight, rf + ".weight", minimum=1, maximum=maximum
        )
    return out


def parse_scheduler_config(ctx: Ctx, raw: dict) -> SchedulerProfile:
    pct = ctx.int32(
        raw.get("percentageOfNodesToScore"), "percentageOfNodesToScore", minimum=0, maximum=100
    )
    profiles = ctx.maps(raw.get("profiles"), "profiles")
    if not profiles:
        return SchedulerProfile(percentage_of_nodes_to_score=pct, source=ctx.file)
    pf, prof = profiles[0]
    name = (
        ctx.str(prof.get("schedulerName"), pf + ".schedulerName", default="default-scheduler")
        or "default-scheduler"
    )
    if prof.get("percentageOfNodesToScore") is not None:
        pct = ctx.int32(
            prof.get("percentageOfNodesToScore"),
            pf + ".percentageOfNodesToScore",
            minimum=0,
            maximum=100,
        )
    plugins = ctx.map(prof.get("plugins"), pf + ".plugins")
    mp = ctx.map(plugins.get("multiPoint"), pf + ".plugins.multiPoint")
    mp_entries = ctx.maps(mp.get("enabled"), pf + ".plugins.multiPoint.enabled")
    mp_enabled = [ctx.str(e.get("name"), f + ".name", required=True) for f, e in mp_entries]
    score = dict(DEFAULT_SCORE_WEIGHTS)
    _apply_set(ctx, plugins, "multiPoint", score, DEFAULT_SCORE_WEIGHTS, pf + ".plugins")
    # multiPoint lists plugins of every kind: a name there scores only if it is a default score
    # plugin or carries a weight; one enabled under ``score`` always does.
    weighted = {
        ctx.str(e.get("name"), f + ".name") for f, e in mp_entries if e.get("weight") is not None
    }
    score = {k: v for k, v in score.items() if k in DEFAULT_SCORE_WEIGHTS or k in weighted}
    _apply_set(ctx, plugins, "score", score, DEFAULT_SCORE_WEIGHTS, pf + ".plugins")

    filters = {k: 1 for k in DEFAULT_FILTER_PLUGINS} | {k: 1 for k in mp_enabled}
    _apply_set(
        ctx, plugins, "filter", filters, {k: 1 for k in DEFAULT_FILTER_PLUGINS}, pf + ".plugins"
    )
    # Disabling a plugin under multiPoint removes it from every extension point.
    mp_disabled = {
        ctx.str(d.get("name"), f + ".name")
        for f, d in ctx.maps(mp.get("disabled"), pf + ".plugins.multiPoint.disabled")
    }
    filter_plugins = tuple(
        p
        for p in filters
        if p not in mp_disabled and ("*" not in mp_disabled or p not in DEFAULT_FILTER_PLUGINS)
    )

    post_filter = {k: 1 for k in DEFAULT_POST_FILTER_PLUGINS}
    _apply_set(
        ctx,
        plugins,
        "postFilter",
        post_filter,
        {k: 1 for k in DEFAULT_POST_FILTER_PLUGINS},
        pf + ".plugins",
    )
    post_filter_plugins = tuple(
        p for p in post_filter if p not in mp_disabled and "*" not in mp_disabled
    )

    placement = dict(DEFAULT_PLACEMENT_WEIGHTS)
    _apply_set(
        ctx,
        plugins,
        "placementScore",
        placement,
        DEFAULT_PLACEMENT_WEIGHTS,
        pf + ".plugins",
        PLACEMENT_PLUGIN_ALIASES,
    )
    generate_defaults = {k: 1 for k in DEFAULT_PLACEMENT_GENERATE_PLUGINS}
    generate = generate_defaults | {PLACEMENT_PLUGIN_ALIASES.get(k, k): 1 for k in mp_enabled}
    _apply_set(
        ctx,
        plugins,
        "placementGenerate",
        generate,
        generate_defaults,
        pf + ".plugins",
        PLACEMENT_PLUGIN_ALIASES,
    )

    strategy, fit_res, shape = "LeastAllocated", {"cpu": 1, "memory": 1}, ()
    balanced = {"cpu": 1, "memory": 1}
    for f, pc in ctx.maps(prof.get("pluginConfig"), pf + ".pluginConfig"):
        pname = ctx.str(pc.get("name"), f + ".name", required=True)
        args = ctx.map(pc.get("args"), f + ".args")
        if pname == "NodeResourcesFit":
            ss = ctx.map(args.get("scoringStrategy"), f + ".args.scoringStrategy")
            if ss:
                strategy = ctx.enum(
                    ss.get("type"),
                    f + ".args.scoringStrategy.type",
                    ("LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"),
                    default="LeastAllocated",
                )
                fit_res = (
                    _resource_weights(
                        ctx, ss.get("resources"), f + ".args.scoringStrategy.resources", 100
                    )
                    or fit_res
                )
                if strategy == "RequestedToCapacityRatio":
                    rtc = ctx.map(
                        ss.get("requestedToCapacityRatio"),
                        f + ".args.scoringStrategy.requestedToCapacityRatio",
                        required=True,
                    )
                    points = []
                    for sf, p in ctx.maps(
                        rtc.get("shape"),
                        f + ".args.scoringStrategy.requestedToCapacityRatio.shape",
                        required=True,
                    ):
                        u = ctx.int32(
                            p.get("utilization"), sf + ".utilization", minimum=0, maximum=100
                        )
                        s = ctx.int32(p.get("score"), sf + ".score", minimum=0, maximum=10)
                        points.append(UtilizationShapePoint(utilization=u, score=s))
                    if any(
                        points[i].utilization >= points[i + 1].utilization
                        for i in range(len(points) - 1)
                    ):
                        raise ctx.fail(
                            f + ".args.scoringStrategy.requestedToCapacityRatio.shape",
                            "utilization values must be strictly increasing",
                        )
                    shape = tuple(points)
        elif pname == "NodeResourcesBalancedAllocation":
            balanced = (
                _resource_weights(ctx, args.get("resources"), f + ".args.resources", 1) or balanced
            )
    return SchedulerProfile(
        scheduler_name=name,
        percentage_of_nodes_to_score=pct,
        filter_plugins=filter_plugins,
        score_weights=score,
        fit_strategy=strategy,
        fit_resources=fit_res,
        balanced_resources=balanced,
        requested_to_capacity_shape=shape,
        placement_weights=placement,
        placement_generate_plugins=tuple(generate),
        post_filter_plugins=post_filter_plugins,
        source=ctx.file,
    )
