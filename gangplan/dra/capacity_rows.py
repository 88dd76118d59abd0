"""What a DRA capacity view (:func:`gangplan.dra.capacity.capacity_view`) adds beside its resource
rows, and how to read it: the names of the view's resources, the records of the exact engine's
DRA families (:mod:`gangplan.solver.exact.capacity`: per-value rows of constrained claims,
counter rows of partitionable devices, allocationMode All and firstAvailable rows, multi-node
device rows, shared claims' rows), held by the view itself."""

from __future__ import annotations

from dataclasses import dataclass, field

from gangplan.dra.model import CapName

PREFIX = "dra.gangplan.io/"
NODE_LABEL = PREFIX + "node"
"""A label naming the node itself, the topology key of the shared-claim affinity terms."""
_BIG = 1 << 40
"""A supply no demand reaches: the node offers the row without bound."""

PairKey = tuple[str, tuple[str, ...], tuple[tuple[str, int], ...]]
"""(DeviceClass, request selectors, capacity requests): the devices a request can take."""

HALL_MAX_PAIRS = 6
"""Overlapping request pairs per group up to which every subset gets its row (2^6 - 7 = 57 rows)."""


@dataclass(frozen=True)
class AlignedConstraint:
    """One constraint of a claim shape, for the exact engine's per-value rows."""

    kind: str
    """``match`` or ``distinct``."""
    attribute: CapName
    pairs: tuple[tuple[PairKey, int], ...]
    """The pairs the requests it covers draw from, with the devices one claim takes of each."""


@dataclass
class AlignedRows:
    """Claims with matchAttribute / distinctAttribute constraints, as the exact engine models
    them (:func:`gangplan.solver.exact.capacity.add_aligned_rows`): per claim shape a resource
    (one unit per claim) that only nodes able to allocate one such claim alone offer, and per node
    the free devices of each (pair, attribute) split by the attribute's value."""

    shapes: dict[str, tuple[AlignedConstraint, ...]] = field(default_factory=dict)
    """resource name -> the shape's constraints."""
    supply: dict[str, dict[tuple[PairKey, CapName], dict[object, int]]] = field(
        default_factory=dict
    )
    """node name -> (pair, attribute) -> attribute value -> free devices of the pair with it."""
    relaxed: dict[str, str] = field(default_factory=dict)
    """node name -> why the rows are a relaxation there (the validator decides)."""


@dataclass
class NodeCounters:
    """One node's partitionable devices, for the exact engine's per-device rows."""

    devices: list[tuple[str, tuple[str, ...], tuple[tuple[tuple[str, str, str], int], ...]]] = (
        field(default_factory=list)
    )
    """Per free device consuming counters that can serve some pending pair alone: (device name,
    the device-count resources it serves, ((pool, counter set, counter), amount) it consumes)."""
    plain: dict[str, int] = field(default_factory=dict)
    """Device-count resource -> the node's devices without counters that serve it alone."""
    available: dict[tuple[str, str, str], int] = field(default_factory=dict)
    """(driver/pool, counter set, counter) -> what the allocated devices left of it."""


@dataclass
class CounterRows:
    """KEP-4815 as the exact engine models it (:func:`gangplan.solver.exact.capacity.add_counter_rows`):
    a boolean per partitionable device (only where such devices exist), counter rows over them,
    and per device-count resource ``demand <= plain devices + taken partitionable devices``."""

    nodes: dict[str, NodeCounters] = field(default_factory=dict)
    relaxed: dict[str, str] = field(default_factory=dict)
    """node -> why its rows are a relaxation there (the validator decides)."""


@dataclass
class MultiRows:
    """Multi-node devices as the exact engine counts them
    (:func:`gangplan.solver.exact.capacity.add_multi_node_rows`): the free ones grouped by the set
    of nodes that reach them, and per device-count resource (a (DeviceClass, selectors) pair or a
    KEP-5004 class row) the devices of each group that serve it and each node's own (node-local)
    devices that do. A node's count in the view holds both; the rows say that a multi-node device
    serves one node only."""

    groups: list[tuple[frozenset[str], int]] = field(default_factory=list)
    """(nodes reaching the group, its free devices)."""
    serves: dict[str, dict[int, int]] = field(default_factory=dict)
    """resource -> group index -> its devices that serve the resource alone."""
    local: dict[str, dict[str, int]] = field(default_factory=dict)
    """resource -> node -> its node-local devices that serve it alone."""


@dataclass
class CapacityRows:
    """What a :func:`capacity_view` adds beside its resource rows, for the exact engine's DRA
    families (:mod:`gangplan.solver.exact.capacity`): one record per view, held by the view itself
    (``Cluster._dra_rows``), so it lives and dies with it."""

    aligned: AlignedRows | None = None
    counters: CounterRows | None = None
    all: dict | None = None
    first_available: dict | None = None
    multi: MultiRows | None = None
    shared: dict | None = None
    restricted: tuple[str, ...] = ()
    """The view's warnings of what the exact model leaves out (devices it does not offer, shared
    claims kept on one node): there its optimum may be below the true one, and the exact Result
    says so (``params.restrictedModel``)."""


def _held(obj, name: str):
    """What ``obj`` holds beside its fields under ``name`` for itself: each holder names its
    owner, so a copy of the object (``model_copy``, ``at_version``), which shares the holder, is
    not mistaken for it."""
    holder = getattr(obj, name, None)
    return holder.value[1] if holder is not None and holder.value[0] is obj else None


def view_rows(view) -> CapacityRows | None:
    """The :class:`CapacityRows` of a capacity view (None for anything else)."""
    return _held(view, "_dra_rows")


def view_source(view):
    """The snapshot a capacity view was made of (``view`` itself for anything else)."""
    source = _held(view, "_dra_source")
    return source if source is not None else view


def aligned_rows(view) -> AlignedRows | None:
    """The per-value rows of a :func:`capacity_view` (None when no pending claim has constraints)."""
    rows = view_rows(view)
    return rows.aligned if rows is not None else None


def counter_rows(view) -> CounterRows | None:
    """The partitionable-device rows of a :func:`capacity_view` (None without such devices)."""
    rows = view_rows(view)
    return rows.counters if rows is not None else None


def all_rows(view) -> dict[str, list[tuple[str, str, int]]] | None:
    """allocationMode All in a :func:`capacity_view`: node -> (the pair's ``all`` resource, the
    pair's device-count resource, the node's matching devices), for
    :func:`gangplan.solver.exact.capacity.add_all_rows`; None without All requests."""
    rows = view_rows(view)
    return rows.all if rows is not None else None


def first_available_rows(view) -> dict[str, list] | None:
    """firstAvailable in a :func:`capacity_view`: the ``fa`` resource of each (claim shape,
    request) -> per subrequest in priority order, (the device-count resource its pair draws on,
    devices per claim), or None where the exact engine does not offer it; None without any."""
    rows = view_rows(view)
    return rows.first_available if rows is not None else None


def multi_node_rows(view) -> MultiRows | None:
    """The multi-node device rows of a :func:`capacity_view` (None without such devices)."""
    rows = view_rows(view)
    return rows.multi if rows is not None else None


def shared_claim_rows(view) -> dict[str, list[tuple[str, int]]] | None:
    """Claims shared by several pending pods in a :func:`capacity_view`: their ``shared`` resource
    (1 for each of their pods) -> the device-count resources their requests draw on, with the
    devices each takes, for :func:`gangplan.solver.exact.capacity.add_shared_claim_rows` (plain
    ExactCount requests only); None without any."""
    rows = view_rows(view)
    return rows.shared if rows is not None else None
