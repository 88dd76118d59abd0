"""The exact engine's constraint families, one line each, in build order.

:func:`.build.build_model` runs every family's ``layout``, ``mask`` and ``build`` in this order
(see :mod:`.family`), ``check_feasible`` names static failures in this order and drops the
``rule`` families one at a time, and each family reads only outputs of families above it. The
node rules (no model part) come first; ``capacity`` before the groups, ``preemption`` right after
them (it reads their admission), ``locality`` last (it reads the groups' ``act``, and adds
objective terms, not rules), then ``room`` (objective="make-room" only: it reads the groups' admission and the
victim units). ``kueue-quota`` (:mod:`.quota`) is inert without Kueue objects. Adding a family: its module with a ``Family`` record, one line here,
its tests (docs/how-to/extend.md).
"""

from __future__ import annotations

from gangplan.solver.exact import (
    affinity,
    capacity,
    gang,
    locality,
    noderules,
    ports,
    preemption,
    quota,
    room,
    spread,
    topology,
)
from gangplan.solver.exact.family import Family

FAMILIES: tuple[Family, ...] = (
    noderules.FIXED_FAMILY,
    noderules.UNSCHEDULABLE_FAMILY,
    noderules.TAINT_FAMILY,
    noderules.NODE_SELECTOR_FAMILY,
    capacity.FAMILY,
    gang.GANG_FAMILY,
    gang.COMPOSITE_FAMILY,
    preemption.FAMILY,
    topology.FAMILY,
    quota.FAMILY,
    ports.FAMILY,
    affinity.ANTI_AFFINITY_FAMILY,
    affinity.AFFINITY_FAMILY,
    spread.FAMILY,
    locality.FAMILY,
    room.FAMILY,
)
