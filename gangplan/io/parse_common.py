"""The pieces every kind's parser shares (:mod:`gangplan.io.parse`): an object's metadata, label
and node selectors, and affinity, with the API server's defaulting of a hand-written object
(matchLabelKeys / mismatchLabelKeys merged into the selector).
"""

from __future__ import annotations

from typing import Any

from gangplan.io.fields import Ctx
from gangplan.models.objects import (
    Affinity,
    LabelSelector,
    NodeSelectorTerm,
    PodAffinityTerm,
    PreferredSchedulingTerm,
    Requirement,
    WeightedPodAffinityTerm,
)
from gangplan.predicates.labels import parse_int64

_NODE_OPS = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")
_LABEL_OPS = ("In", "NotIn", "Exists", "DoesNotExist")


# ---- selectors and affinity -------------------------------------------------------------------
def _requirements(ctx: Ctx, raw: Any, field: str, ops: tuple[str, ...]) -> tuple[Requirement, ...]:
    out = []
    for f, r in ctx.maps(raw, field):
        op = ctx.enum(r.get("operator"), f + ".operator", ops, default="")
        values = ctx.str_list(r.get("values"), f + ".values")
        if op in ("In", "NotIn") and not values:
            raise ctx.fail(f + ".values", f"operator {op} needs at least one value")
        if op in ("Gt", "Lt"):
            if len(values) != 1:
                raise ctx.fail(f + ".values", f"operator {op} needs exactly one value")
            if parse_int64(values[0]) is None:
                raise ctx.fail(f + ".values", f"operator {op} needs an integer, got {values[0]!r}")
        out.append(
            Requirement(
                key=ctx.str(r.get("key"), f + ".key", required=True), operator=op, values=values
            )
        )
    return tuple(out)


def parse_label_selector(ctx: Ctx, raw: Any, field: str) -> LabelSelector | None:
    if raw is None:
        return None
    m = ctx.map(raw, field)
    return LabelSelector(
        match_labels=ctx.str_map(m.get("matchLabels"), field + ".matchLabels"),
        match_expressions=_requirements(
            ctx, m.get("matchExpressions"), field + ".matchExpressions", _LABEL_OPS
        ),
    )


def node_selector_term(ctx: Ctx, raw: dict, field: str) -> NodeSelectorTerm:
    return NodeSelectorTerm(
        match_expressions=_requirements(
            ctx, raw.get("matchExpressions"), field + ".matchExpressions", _NODE_OPS
        ),
        match_fields=_requirements(ctx, raw.get("matchFields"), field + ".matchFields", _NODE_OPS),
    )


def _pod_affinity_term(
    ctx: Ctx, raw: dict, field: str, pod_labels: dict[str, str]
) -> PodAffinityTerm:
    selector = parse_label_selector(ctx, raw.get("labelSelector"), field + ".labelSelector")
    match_keys = ctx.str_list(raw.get("matchLabelKeys"), field + ".matchLabelKeys")
    mismatch_keys = ctx.str_list(raw.get("mismatchLabelKeys"), field + ".mismatchLabelKeys")
    if selector is not None and (match_keys or mismatch_keys):
        # The API server merges these into the selector at creation (KEP-3633, v1.31+).
        extra = [
            Requirement(key=k, operator="In", values=(pod_labels[k],))
            for k in match_keys
            if k in pod_labels
        ]
        extra += [
            Requirement(key=k, operator="NotIn", values=(pod_labels[k],))
            for k in mismatch_keys
            if k in pod_labels
        ]
        exprs = selector.match_expressions + tuple(
            e for e in extra if e not in selector.match_expressions
        )
        selector = LabelSelector(match_labels=selector.match_labels, match_expressions=exprs)
    return PodAffinityTerm(
        label_selector=selector,
        namespaces=ctx.str_list(raw.get("namespaces"), field + ".namespaces"),
        namespace_selector=parse_label_selector(
            ctx, raw.get("namespaceSelector"), field + ".namespaceSelector"
        ),
        topology_key=ctx.str(raw.get("topologyKey"), field + ".topologyKey", required=True),
    )


def _weighted_terms(
    ctx: Ctx, raw: Any, field: str, labels: dict[str, str]
) -> tuple[WeightedPodAffinityTerm, ...]:
    out = []
    for f, w in ctx.maps(raw, field):
        out.append(
            WeightedPodAffinityTerm(
                weight=ctx.int32(
                    w.get("weight"), f + ".weight", required=True, minimum=1, maximum=100
                ),
                term=_pod_affinity_term(
                    ctx,
                    ctx.map(w.get("podAffinityTerm"), f + ".podAffinityTerm", required=True),
                    f + ".podAffinityTerm",
                    labels,
                ),
            )
        )
    return tuple(out)


def parse_affinity(ctx: Ctx, raw: Any, field: str, labels: dict[str, str]) -> Affinity:
    a = ctx.map(raw, field)
    if not a:
        return Affinity()
    na = ctx.map(a.get("nodeAffinity"), field + ".nodeAffinity")
    pa = ctx.map(a.get("podAffinity"), field + ".podAffinity")
    paa = ctx.map(a.get("podAntiAffinity"), field + ".podAntiAffinity")
    node_required = None
    req_raw = na.get("requiredDuringSchedulingIgnoredDuringExecution")
    if req_raw is not None:
        f = field + ".nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"
        req = ctx.map(req_raw, f)
        node_required = tuple(
            node_selector_term(ctx, t, tf)
            for tf, t in ctx.maps(
                req.get("nodeSelectorTerms"), f + ".nodeSelectorTerms", required=True
            )
        )
    preferred = []
    f = field + ".nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution"
    for pf, p in ctx.maps(na.get("preferredDuringSchedulingIgnoredDuringExecution"), f):
        preferred.append(
            PreferredSchedulingTerm(
                weight=ctx.int32(
                    p.get("weight"), pf + ".weight", required=True, minimum=1, maximum=100
                ),
                preference=node_selector_term(
                    ctx,
                    ctx.map(p.get("preference"), pf + ".preference", required=True),
                    pf + ".preference",
                ),
            )
        )

    def required_terms(block: dict, name: str) -> tuple[PodAffinityTerm, ...]:
        f = f"{field}.{name}.requiredDuringSchedulingIgnoredDuringExecution"
        return tuple(
            _pod_affinity_term(ctx, t, tf, labels)
            for tf, t in ctx.maps(block.get("requiredDuringSchedulingIgnoredDuringExecution"), f)
        )

    return Affinity(
        node_required=node_required,
        node_preferred=tuple(preferred),
        pod_affinity_required=required_terms(pa, "podAffinity"),
        pod_affinity_preferred=_weighted_terms(
            ctx,
            pa.get("preferredDuringSchedulingIgnoredDuringExecution"),
            field + ".podAffinity.preferredDuringSchedulingIgnoredDuringExecution",
            labels,
        ),
        pod_anti_affinity_required=required_terms(paa, "podAntiAffinity"),
        pod_anti_affinity_preferred=_weighted_terms(
            ctx,
            paa.get("preferredDuringSchedulingIgnoredDuringExecution"),
            field + ".podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution",
            labels,
        ),
    )


# ---- metadata ---------------------------------------------------------------------------------
def metadata(ctx: Ctx, raw: dict, *, namespaced: bool) -> tuple[str, str, dict]:
    meta = ctx.map(raw.get("metadata"), "metadata", required=True)
    name = ctx.str(meta.get("name"), "metadata.name", required=True)
    ns = (
        ctx.str(meta.get("namespace"), "metadata.namespace", default="default")
        if namespaced
        else ""
    )
    return ns or "default", name, meta


__all__ = ["metadata", "node_selector_term", "parse_affinity", "parse_label_selector"]
