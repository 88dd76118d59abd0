"""Resource fit (``pkg/scheduler/framework/plugins/noderesources/fit.go``, v1.35)."""

from __future__ import annotations

from gangplan.models.objects import PODS


def insufficient(request: dict[str, int], free: dict[str, int], free_pods: int) -> list[str]:
    """Resources ``request`` does not fit in ``free``; ``pods`` when no pod slot is left.

    A resource the node does not list counts as 0 free. Zero requests never fail.

    >>> insufficient({"cpu": 2000, "nvidia.com/gpu": 1}, {"cpu": 1000}, 5)
    ['cpu', 'nvidia.com/gpu']
    """
    out = [PODS] if free_pods < 1 else []
    for r, q in request.items():
        if q > 0 and q > free.get(r, 0):
            out.append(r)
    return out


def exceeds_allocatable(request: dict[str, int], allocatable: dict[str, int]) -> list[str]:
    """Resources whose request alone exceeds the node's allocatable (UnschedulableAndUnresolvable)."""
    return [r for r, q in request.items() if q > 0 and q > allocatable.get(r, 0)]


def message_for(resource: str) -> str:
    """Upstream's per-resource reason: "Insufficient cpu", "Too many pods"."""
    return "Too many pods" if resource == PODS else f"Insufficient {resource}"
