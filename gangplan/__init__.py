"""gangplan: place Kubernetes pod groups (gangs) the way kube-scheduler would, and optimally.

>>> import gangplan as gp
>>> cluster = gp.load("scenarios/showcase/gang-fits.yaml")     # doctest: +SKIP
>>> greedy = gp.solve(cluster)                                   # doctest: +SKIP
>>> d = gp.diff(cluster, greedy=greedy)                          # doctest: +SKIP

The names in ``__all__`` are the public API (docs/python-api.md); everything else is private by
convention. They are imported on first use, so ``import gangplan`` stays cheap.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

_EXPORTS = {
    "load": "gangplan.api",
    "solve": "gangplan.api",
    "diff": "gangplan.api",
    "validate": "gangplan.api",
    "SolveOptions": "gangplan.api",
    "DiffOptions": "gangplan.api",
    "make_room": "gangplan.api",
    "RoomOptions": "gangplan.api",
    "RoomDocument": "gangplan.models.room",
    "RoomWeights": "gangplan.models.room",
    "Cluster": "gangplan.models.cluster",
    "Result": "gangplan.models.result",
    "Diff": "gangplan.solver.diff",
    "Violation": "gangplan.solver.validate",
    "SnapshotError": "gangplan.io.errors",
    "GreedySession": "gangplan.solver.greedy",
}

__all__ = [
    "Cluster",
    "Diff",
    "DiffOptions",
    "GreedySession",
    "Result",
    "RoomDocument",
    "RoomOptions",
    "RoomWeights",
    "SnapshotError",
    "SolveOptions",
    "Violation",
    "diff",
    "load",
    "make_room",
    "solve",
    "validate",
]

if TYPE_CHECKING:
    from gangplan.api import (
        DiffOptions,
        RoomOptions,
        SolveOptions,
        diff,
        load,
        make_room,
        solve,
        validate,
    )
    from gangplan.io.errors import SnapshotError
    from gangplan.models.cluster import Cluster
    from gangplan.models.result import Result
    from gangplan.models.room import RoomDocument, RoomWeights
    from gangplan.solver.diff import Diff
    from gangplan.solver.greedy import GreedySession
    from gangplan.solver.validate import Violation


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'gangplan' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
