"""Issue 38 ('The house after the growth', Size): the DRA code stays readable. No module of
``gangplan/dra`` over 800 lines, no function there or in ``gangplan/io/dra_build.py`` over 120
lines, and the names the allocator and the capacity view were split into stay importable from
``gangplan.dra.allocator`` and ``gangplan.dra.capacity``."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "gangplan"
MAX_MODULE_LINES = 800
MAX_FUNCTION_LINES = 120


def _long_functions(path: Path, root: Path = PACKAGE.parent) -> list[tuple[str, int]]:
    tree = ast.parse(path.read_text(), filename=str(path))
    return [
        (f"{path.relative_to(root)}:{n.name}", n.end_lineno - n.lineno + 1)
        for n in ast.walk(tree)
        if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)
        and n.end_lineno - n.lineno + 1 > MAX_FUNCTION_LINES
    ]


def test_no_dra_module_over_800_lines():
    long = {
        str(p.relative_to(PACKAGE.parent)): n
        for p in sorted((PACKAGE / "dra").glob("*.py"))
        if (n := len(p.read_text().splitlines())) > MAX_MODULE_LINES
    }
    assert long == {}


def test_no_dra_function_over_120_lines():
    files = [*sorted((PACKAGE / "dra").glob("*.py")), PACKAGE / "io" / "dra_build.py"]
    assert [f for p in files for f in _long_functions(p)] == []


def test_the_long_function_check_sees_a_long_function(tmp_path):
    body = "\n".join(f"        x{i} = {i}" for i in range(MAX_FUNCTION_LINES))
    (tmp_path / "m.py").write_text(
        f"def short():\n    return 1\n\n\nclass C:\n    def long(self):\n{body}\n"
    )
    assert _long_functions(tmp_path / "m.py", tmp_path) == [("m.py:long", MAX_FUNCTION_LINES + 1)]


ALLOCATOR_NAMES = (
    "AllocationError",
    "Consumed",
    "Constraints",
    "DeviceResult",
    "_SEARCH",
    "_counted",
    "_joint_by_model",
    "add_consumed",
    "all_devices",
    "allocate",
    "allocate_joint",
    "allocate_results",
    "attribute_value",
    "available_counters",
    "brute_force_exists",
    "constraints_hold",
    "consumed_amount",
    "consumption",
    "countable_mask",
    "counter_pools",
    "counters_fit_alone",
    "fits",
    "has_attribute",
    "matches",
    "qualify",
    "selectable",
    "usable_mask",
    "violates",
)
CAPACITY_NAMES = (
    "HALL_MAX_PAIRS",
    "NODE_LABEL",
    "PREFIX",
    "_BIG",
    "_count",
    "AlignedConstraint",
    "AlignedRows",
    "CapacityRows",
    "CounterRows",
    "MultiRows",
    "NodeCounters",
    "PairKey",
    "aligned_rows",
    "all_rows",
    "capacity_view",
    "check_node",
    "check_nodes",
    "counter_rows",
    "first_available_rows",
    "multi_node_rows",
    "replay",
    "shared_claim_rows",
    "try_node",
    "view_rows",
    "view_source",
)


def test_the_split_modules_names_stay_importable_where_they_were():
    allocator = importlib.import_module("gangplan.dra.allocator")
    capacity = importlib.import_module("gangplan.dra.capacity")
    assert [n for n in ALLOCATOR_NAMES if not hasattr(allocator, n)] == []
    assert [n for n in CAPACITY_NAMES if not hasattr(capacity, n)] == []


def test_the_allocators_entry_points_read_counted_from_the_allocator_module(monkeypatch):
    """tests/test_dra_counting.py turns counting off by patching ``gangplan.dra.allocator._counted``:
    ``allocate_results`` and ``allocate_joint`` must look it up there."""
    import gangplan.dra.allocator as allocator
    from gangplan.dra.model import Device, DeviceClass, DeviceRequest

    calls = []

    def counted(*a, **k):
        calls.append(1)
        return allocator._SEARCH

    monkeypatch.setattr(allocator, "_counted", counted)
    classes = {"c": DeviceClass(name="c", selectors=('device.driver == "d"',))}
    devices = [Device(driver="d", pool="p", slice="s", name=f"g{i}") for i in range(2)]
    claims = [("ns/a", (DeviceRequest(name="r", device_class="c", count=2),))]
    got = allocator.allocate_results(claims, devices, set(), classes)
    assert got == {
        "ns/a": (
            allocator.DeviceResult("r", ("d", "p", "g0")),
            allocator.DeviceResult("r", ("d", "p", "g1")),
        )
    }
    assert len(calls) == 1
    assert allocator.allocate_joint(claims, devices, set(), classes) == got
    assert len(calls) == 3  # (its own, then allocate_results' for the one claim)
