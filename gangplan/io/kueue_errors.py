"""The API server's and Kueue's webhooks' error wording for Kueue objects (issue 42).

A rejected object is bad input (:class:`~gangplan.io.errors.SnapshotError`, exit 2) whose message
is the ``field.Error`` body the API server returns (``k8s.io/apimachinery/pkg/util/validation/field``
``errors.go``: ``Invalid value: <value>: <detail>``, ``Unsupported value: <value>: supported values:
...``, ``Too many: <n>: must have at most <max> items``, ``Required value: <detail>``, ``Duplicate
value: <value>``, ``Forbidden: <detail>``, ``Not found: <value>``), with the field path given apart
(``Ctx.fail`` prints it between the object and the message). Three sources reject:

* the CRD's OpenAPI schema (kubebuilder markers in ``apis/kueue/v1beta{1,2}/*_types.go``): enums,
  ``MinItems`` / ``MaxItems``, ``Minimum``; a list over its maximum is ``Too many``, one under its
  minimum is ``Invalid value: <n>: <path> in body should have at least <min> items``;
* the CRD's CEL rules (``+kubebuilder:validation:XValidation``), reported on the path of the type
  carrying the rule as ``Invalid value: "object": <rule message>``;
* Kueue's validating webhooks (``pkg/webhooks/{clusterqueue,cohort,resourceflavor,workload}_webhook.go``
  and ``common.go`` at v0.19.2), which run after the schema accepted the object.

The API server reports every schema error of an object at once; gangplan names the first one it
finds (the file, object and field say where to look).
"""

from __future__ import annotations

from typing import Any

from gangplan.io.errors import SnapshotError
from gangplan.io.fields import Ctx


def go_value(v: Any) -> str:
    """A value as ``field.Error`` prints it: strings quoted (``%q``), numbers bare."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int | float):
        return str(v)
    return '"' + str(v).replace("\\", "\\\\").replace('"', '\\"') + '"'


def invalid(ctx: Ctx, path: str, value: Any, detail: str) -> SnapshotError:
    return ctx.fail(path, f"Invalid value: {go_value(value)}: {detail}")


def rule(ctx: Ctx, path: str, message: str) -> SnapshotError:
    """A CEL ``XValidation`` rule that failed on the object at ``path``."""
    return ctx.fail(path, f'Invalid value: "object": {message}')


def unsupported(ctx: Ctx, path: str, value: Any, supported: tuple[str, ...]) -> SnapshotError:
    if not supported:  # field.NotSupported with no valid values prints none
        return ctx.fail(path, f"Unsupported value: {go_value(value)}")
    listed = ", ".join(go_value(s) for s in supported)
    return ctx.fail(path, f"Unsupported value: {go_value(value)}: supported values: {listed}")


def too_many(ctx: Ctx, path: str, got: int, most: int) -> SnapshotError:
    return ctx.fail(path, f"Too many: {got}: must have at most {most} items")


def required(ctx: Ctx, path: str, detail: str = "Required value") -> SnapshotError:
    return ctx.fail(path, detail if detail == "Required value" else f"Required value: {detail}")


def duplicate(ctx: Ctx, path: str, value: Any) -> SnapshotError:
    return ctx.fail(path, f"Duplicate value: {go_value(value)}")


def forbidden(ctx: Ctx, path: str, detail: str) -> SnapshotError:
    return ctx.fail(path, f"Forbidden: {detail}")


def items(ctx: Ctx, raw: Any, path: str, *, least: int = 0, most: int | None = None) -> list:
    """A list field with the schema's ``MinItems`` / ``MaxItems``."""
    got = ctx.list(raw, path)
    if most is not None and len(got) > most:
        raise too_many(ctx, path, len(got), most)
    if raw is not None and len(got) < least:
        raise invalid(ctx, path, len(got), f"{path} in body should have at least {least} items")
    return got


def enum(ctx: Ctx, raw: Any, path: str, allowed: tuple[str, ...], default: str) -> str:
    """An enum field (``+kubebuilder:validation:Enum``), its ``+kubebuilder:default`` when unset."""
    if raw is None:
        return default
    value = ctx.str(raw, path)
    if value not in allowed:
        raise unsupported(ctx, path, value, allowed)
    return value


def minimum(ctx: Ctx, raw: Any, path: str, least: int, *, default: int | None = None) -> int | None:
    """An int32 field with ``+kubebuilder:validation:Minimum``."""
    if raw is None:
        return default
    v = ctx.int32(raw, path)
    if v < least:
        raise invalid(ctx, path, v, f"{path} in body should be greater than or equal to {least}")
    return v


__all__ = [
    "duplicate",
    "enum",
    "forbidden",
    "go_value",
    "invalid",
    "items",
    "minimum",
    "required",
    "rule",
    "too_many",
    "unsupported",
]
