"""A pod group member's role, as Kueue's pod webhook hashes it (issue 42).

Kueue's pod integration makes one podSet per *role* of a pod group, named by the role hash its
pod webhook writes into the ``kueue.x-k8s.io/role-hash`` annotation when the pod is created
(``pkg/controller/jobs/pod/pod_webhook.go``); a snapshot captured from a cluster has it, and it is
used as is. A pod written by hand has none: the hash is then computed as
``GenerateRoleHash`` (``pkg/util/pod/pod.go``, kubernetes-sigs/kueue v0.19.2, 8eab6877) does:
the first 8 hex digits of sha256 of ``json.Marshal({"spec": SpecShape(spec)})``, where
``SpecShape`` keeps initContainers' and containers' requests and ports, nodeSelector, affinity,
tolerations, runtimeClassName, priority, topologySpreadConstraints, overhead, resourceClaims and
(when set) the pod-level requests.

``encoding/json`` writes maps with their keys sorted and structs in field order, omitting empty
``omitempty`` fields; quantities in their canonical form (``resource.Quantity.String``:
``1000m`` is ``1``, ``1024Mi`` is ``1Gi``, ``0.5`` is ``500m``). The webhook runs after the API
server's defaulting and the Priority admission plugin, so a container port's protocol is ``TCP``
when unset and ``priority`` is the pod's resolved priority (the ``priority`` argument). Fields the
loader does not default otherwise are hashed as written.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

from gangplan.models.quantity import QuantityError, parse_quantity

_DEC = {-9: "n", -6: "u", -3: "m", 0: "", 3: "k", 6: "M", 9: "G", 12: "T", 15: "P", 18: "E"}
_BIN = ["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"]


def canonical_quantity(raw: Any) -> str:
    """``resource.Quantity.String()`` of a quantity as written (``CanonicalizeBytes``).

    >>> [canonical_quantity(q) for q in ("1000m", "0.5", "1500m", "2000", "1024Mi", "1000Mi", 3, "1e3")]
    ['1', '500m', '1500m', '2k', '1Gi', '1000Mi', '3', '1e3']
    """
    text = str(raw).strip()
    try:
        v = parse_quantity(raw)
    except QuantityError:
        return text
    if v == 0:
        return "0"
    binary = re.search(r"[KMGTPE]i$", text) is not None
    exponent_form = re.search(r"[eE][+-]?\d+$", text) is not None
    if binary and -1024 < v < 1024 or binary and v.denominator != 1:
        binary = False  # shown as DecimalSI so as not to lose precision
    if binary:
        n, k = int(v), 0
        while n % 1024 == 0 and k < len(_BIN) - 1:
            n //= 1024
            k += 1
        return f"{n}{_BIN[k]}"
    scaled = v * 10**9
    n = scaled.numerator // scaled.denominator + (1 if scaled.denominator != 1 else 0)
    e = -9
    while n % 10 == 0:
        n //= 10
        e += 1
    shift = e % 3  # down to a multiple of 3 (AsCanonicalBytes)
    n, e = n * 10**shift, e - shift
    if exponent_form:
        return f"{n}e{e}" if e else str(n)
    return f"{n}{_DEC[e]}" if e in _DEC else f"{n}e{e}"


def _resources(m: Any) -> dict[str, str] | None:
    if not isinstance(m, dict) or not m:
        return None
    return {str(k): canonical_quantity(m[k]) for k in sorted(m, key=str)}


def _map(m: Any) -> dict | None:
    if not isinstance(m, dict) or not m:
        return None
    return {str(k): m[k] for k in sorted(m, key=str)}


# (json name, omitempty, encoder): the struct's fields in Go declaration order (k8s.io/api core/v1,
# apimachinery meta/v1).
def _struct(fields: list[tuple[str, bool, Any]]):
    def enc(v: Any) -> Any:
        if not isinstance(v, dict):
            return v
        out: dict[str, Any] = {}
        for name, omit, sub in fields:
            value = v.get(name)
            if value is not None and sub is not None:
                value = sub(value)
            if omit and value in (None, "", 0, False, [], {}):
                continue
            out[name] = value
        return out

    return enc


def _list(enc):
    def f(v: Any) -> Any:
        if not isinstance(v, list) or not v:
            return None
        return [enc(x) for x in v]

    return f


_requirement = _struct([("key", False, None), ("operator", False, None), ("values", True, None)])
_label_selector = _struct(
    [("matchLabels", True, _map), ("matchExpressions", True, _list(_requirement))]
)
_term = _struct(
    [("matchExpressions", True, _list(_requirement)), ("matchFields", True, _list(_requirement))]
)
_node_affinity = _struct(
    [
        (
            "requiredDuringSchedulingIgnoredDuringExecution",
            True,
            _struct([("nodeSelectorTerms", False, _list(_term))]),
        ),
        (
            "preferredDuringSchedulingIgnoredDuringExecution",
            True,
            _list(_struct([("weight", False, None), ("preference", False, _term)])),
        ),
    ]
)
_pod_term = _struct(
    [
        ("labelSelector", True, _label_selector),
        ("namespaces", True, None),
        ("topologyKey", False, None),
        ("namespaceSelector", True, _label_selector),
        ("matchLabelKeys", True, None),
        ("mismatchLabelKeys", True, None),
    ]
)
_pod_affinity = _struct(
    [
        ("requiredDuringSchedulingIgnoredDuringExecution", True, _list(_pod_term)),
        (
            "preferredDuringSchedulingIgnoredDuringExecution",
            True,
            _list(_struct([("weight", False, None), ("podAffinityTerm", False, _pod_term)])),
        ),
    ]
)
_affinity = _struct(
    [
        ("nodeAffinity", True, _node_affinity),
        ("podAffinity", True, _pod_affinity),
        ("podAntiAffinity", True, _pod_affinity),
    ]
)
_toleration = _struct(
    [
        ("key", True, None),
        ("operator", True, None),
        ("value", True, None),
        ("effect", True, None),
        ("tolerationSeconds", True, None),
    ]
)
_spread = _struct(
    [
        ("maxSkew", False, None),
        ("topologyKey", False, None),
        ("whenUnsatisfiable", False, None),
        ("labelSelector", True, _label_selector),
        ("minDomains", True, None),
        ("nodeAffinityPolicy", True, None),
        ("nodeTaintsPolicy", True, None),
        ("matchLabelKeys", True, None),
    ]
)
_claim = _struct(
    [
        ("name", False, None),
        ("resourceClaimName", True, None),
        ("resourceClaimTemplateName", True, None),
    ]
)


def _port(p: Any) -> Any:
    if not isinstance(p, dict):
        return p
    return _struct(
        [
            ("name", True, None),
            ("hostPort", True, None),
            ("containerPort", False, None),
            ("protocol", True, None),
            ("hostIP", True, None),
        ]
    )({**p, "protocol": p.get("protocol") or "TCP"})


def _containers(cs: Any) -> list | None:
    if not isinstance(cs, list) or not cs:
        return None
    out = []
    for c in cs:
        c = c if isinstance(c, dict) else {}
        res = c.get("resources") if isinstance(c.get("resources"), dict) else {}
        out.append(
            {  # a map[string]any: keys sorted
                "ports": _list(_port)(c.get("ports")),
                "resources": {"requests": _resources(res.get("requests"))},
            }
        )
    return out


def go_json(v: Any) -> str:
    """``encoding/json`` output of ``v`` (dicts already in the order Go writes them)."""
    s = json.dumps(v, separators=(",", ":"), ensure_ascii=False)
    for ch, esc in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026")):
        s = s.replace(ch, esc)
    return s.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


def role_hash(pod_raw: dict, priority: int | None) -> str:
    """The pod's role: its ``kueue.x-k8s.io/role-hash`` annotation, else ``GenerateRoleHash`` of its
    spec (see the module docstring); ``priority``: the pod's resolved priority."""
    meta = pod_raw.get("metadata") if isinstance(pod_raw.get("metadata"), dict) else {}
    ann = meta.get("annotations") if isinstance(meta.get("annotations"), dict) else {}
    if ann.get("kueue.x-k8s.io/role-hash"):
        return str(ann["kueue.x-k8s.io/role-hash"])
    spec = pod_raw.get("spec") if isinstance(pod_raw.get("spec"), dict) else {}
    shape: dict[str, Any] = {
        "affinity": _affinity(spec["affinity"]) if isinstance(spec.get("affinity"), dict) else None,
        "containers": _containers(spec.get("containers")),
        "initContainers": _containers(spec.get("initContainers")),
        "nodeSelector": _map(spec.get("nodeSelector")),
        "overhead": _resources(spec.get("overhead")),
        "priority": spec.get("priority", priority),
        "resourceClaims": _list(_claim)(spec.get("resourceClaims")),
        "runtimeClassName": spec.get("runtimeClassName"),
        "tolerations": _list(_toleration)(spec.get("tolerations")),
        "topologySpreadConstraints": _list(_spread)(spec.get("topologySpreadConstraints")),
    }
    if isinstance(spec.get("resources"), dict):
        shape["resources"] = _resources(spec["resources"].get("requests"))
        shape = dict(sorted(shape.items()))
    return hashlib.sha256(go_json({"spec": shape}).encode()).hexdigest()[:8]


__all__ = ["canonical_quantity", "go_json", "role_hash"]
